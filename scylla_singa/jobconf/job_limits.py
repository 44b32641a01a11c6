"""Ceilings on how big a job.conf may say a job is, checked before anything is built from its counts.

SINGA's cluster section multiplies small numbers into big ones: one line,
`nworker_groups: 100000000`, asks for a process table of a hundred million
entries, which would take minutes and gigabytes to build and print. The
plan (plan.py) calls `check_limits` right after validation and before the
process table, the traffic estimate or any list is made, so a job within
the ceilings costs well under a second to plan and a job past them is
refused at once, at the line that makes it big, with the flag that raises
the ceiling. The ceilings are per job; a cluster that really runs bigger
jobs raises them (`run`/`plan` --max-processes, --max-groups,
--max-workers, --max-servers).
"""

from __future__ import annotations

from dataclasses import dataclass

from .parse import ParsedJob
from .processes import ClusterShape

DEFAULT_MAX_PROCESSES = 512
DEFAULT_MAX_GROUPS = 512
DEFAULT_MAX_WORKERS = 8192
DEFAULT_MAX_SERVERS = 8192


@dataclass(frozen=True)
class JobLimits:
    """The most processes, worker or server groups, workers and servers (threads) one job may have."""

    max_processes: int = DEFAULT_MAX_PROCESSES
    max_groups: int = DEFAULT_MAX_GROUPS
    max_workers: int = DEFAULT_MAX_WORKERS
    max_servers: int = DEFAULT_MAX_SERVERS


def check_limits(parsed: ParsedJob, shape: ClusterShape, limits: JobLimits) -> None:
    """Raise JobConfError, at the cluster field that makes the job too big, when `shape` passes a ceiling.

    O(1): only the counts are multiplied, nothing is built. `shape` must
    have passed processes.check_shape (every count at least 1).
    """
    checks = (
        ("worker groups", shape.nworker_groups, limits.max_groups, "--max-groups", ("nworker_groups",)),
        ("server groups", shape.nserver_groups, limits.max_groups, "--max-groups", ("nserver_groups",)),
        ("workers", shape.nworkers, limits.max_workers, "--max-workers",
         ("nworker_groups", "nworkers_per_group")),
        ("servers", shape.nservers, limits.max_servers, "--max-servers",
         ("nserver_groups", "nservers_per_group")),
        ("processes", shape.nprocs, limits.max_processes, "--max-processes",
         ("nworker_groups", "nworkers_per_group", "nserver_groups", "nservers_per_group")),
    )
    for what, count, ceiling, flag, fields in checks:
        if count > ceiling:
            field = _largest(shape, fields)
            how = _formula(what, shape)
            raise parsed.error(f"this cluster section makes {count:,} {what}{f' ({how})' if how else ''}, more "
                               f"than the ceiling of {ceiling:,} {what} per job; if the job is meant to be that "
                               f"big, raise the ceiling with {flag} N", f"cluster.{field}")


def _largest(shape: ClusterShape, fields: tuple[str, ...]) -> str:
    """The field among `fields` with the biggest value: the one most likely mistyped."""
    return max(fields, key=lambda name: getattr(shape, name))


def _formula(what: str, s: ClusterShape) -> str:
    """How SINGA's rules arrive at the count, with the conf's numbers ("" for a count set directly)."""
    workers = f"{s.nworker_groups} worker groups x {s.nworkers_per_group} workers per group"
    servers = f"{s.nserver_groups} server groups x {s.nservers_per_group} servers per group"
    if what.endswith("groups"):
        return ""
    if what == "workers":
        return workers
    if what == "servers":
        return servers
    how = "summed" if s.server_worker_separate else "the larger of the two"
    return (f"{workers} / {s.nworkers_per_procs} per process, and {servers} / {s.nservers_per_procs} per "
            f"process, {how}")
