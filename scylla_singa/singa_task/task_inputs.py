"""The task's inputs, as the framework hands them over (docs/contracts.md), and their checks.

    singa-task -conf JOB.conf [-procs_id K] [-cluster FILE] [-workspace DIR] [-resume]
               [-startup_timeout S]

The flags are the Python runtime's (the same command template serves both
images). Environment: SCYLLA_JOB_ID, SCYLLA_PROC_ID (when -procs_id is
absent), SCYLLA_PROGRESS_URL with SCYLLA_PROGRESS_TOKEN (its Bearer token,
never printed), MESOS_TASK_ID, and for real SINGA also
SCYLLA_ZK_HOSTS (ZooKeeper connect string, needed by jobs of more than one
process), SCYLLA_ATTEMPT (the gang's attempt number, the same for every
task of an attempt; default 1) and SCYLLA_STARTUP_TIMEOUT (seconds,
default 120). Anything wrong here is a BadInput: exit 2, one line.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scylla_singa.contracts import (ENV_ATTEMPT, ENV_JOB_ID, ENV_PROC_ID, ENV_PROGRESS_TOKEN, ENV_PROGRESS_URL,
                                    ENV_STARTUP_TIMEOUT, ENV_TASK_ID, ENV_ZK_HOSTS)
from scylla_singa.runtime.cluster_file import Peer, load_cluster
from scylla_singa.runtime.runtime_errors import SingaConfigError


class BadInput(ValueError):
    """A flag, variable or file of the contract is missing or wrong (exit 2)."""


@dataclass(frozen=True)
class TaskInputs:
    conf: Path
    proc: int
    cluster: tuple[Peer, ...] | None
    cluster_nprocs: int | None
    workspace: str | None
    resume: bool
    job: str | None
    attempt: int
    zk_hosts: str | None
    progress_url: str | None
    task: str | None
    startup_timeout_s: float
    progress_token: str | None = field(default=None, repr=False)   # never in a printed TaskInputs


class _FlagParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput(f"singa-task: {message} (usage: {' '.join(self.format_usage().split()[1:])})")


def _parser() -> argparse.ArgumentParser:
    p = _FlagParser(prog="singa-task", allow_abbrev=False, add_help=False,
                description="Run one real Apache SINGA 0.3.0 process for the scylla-singa framework.")
    p.add_argument("-conf")
    p.add_argument("-procs_id", type=int)
    p.add_argument("-cluster")
    p.add_argument("-workspace")
    p.add_argument("-resume", action="store_true")
    p.add_argument("-startup_timeout", type=float)
    p.add_argument("-h", "-help", "--help", action="store_true", dest="help")
    return p


def usage() -> str:
    return _parser().format_help() + (__doc__ or "")


def read_cluster(path: Path) -> tuple[int, tuple[Peer, ...]]:
    """(nprocs, peers) of a cluster.json; BadInput naming the file otherwise."""
    try:
        cluster = load_cluster(path, None)
    except SingaConfigError as exc:
        raise BadInput(str(exc)) from None
    return cluster.nprocs, cluster.procs


def _number(env: Mapping[str, str], name: str, default: float, kind: type = float) -> float:
    raw = env.get(name, "")
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise BadInput(f"singa-task: {name}={raw!r} is not a number") from None
    if value <= 0:
        raise BadInput(f"singa-task: {name}={raw!r} must be positive")
    return value


def read_inputs(argv: list[str], env: Mapping[str, str] = os.environ) -> TaskInputs | None:
    """The inputs, or None when help was asked for; BadInput when something is wrong."""
    args, unknown = _parser().parse_known_args(argv)
    if args.help:
        return None
    if not args.conf:
        raise BadInput("singa-task: -conf JOB.conf is required")
    if unknown:
        raise BadInput(f"singa-task: unknown argument(s) {' '.join(unknown)}")
    proc = args.procs_id
    if proc is None:
        raw = env.get(ENV_PROC_ID, "0")
        if not raw.isdigit():
            raise BadInput(f"singa-task: {ENV_PROC_ID}={raw!r} is not a process id")
        proc = int(raw)
    if proc < 0:
        raise BadInput(f"singa-task: -procs_id {proc} must be >= 0")
    nprocs, peers = read_cluster(Path(args.cluster)) if args.cluster else (None, None)
    if nprocs is not None and proc >= nprocs:
        raise BadInput(f"singa-task: -procs_id {proc} but {args.cluster} has {nprocs} processes")
    timeout = args.startup_timeout or _number(env, ENV_STARTUP_TIMEOUT, 120.0)
    return TaskInputs(
        conf=Path(args.conf), proc=proc, cluster=peers, cluster_nprocs=nprocs, workspace=args.workspace,
        resume=args.resume, job=env.get(ENV_JOB_ID) or None,
        attempt=int(_number(env, ENV_ATTEMPT, 1, int)), zk_hosts=env.get(ENV_ZK_HOSTS) or None,
        progress_url=env.get(ENV_PROGRESS_URL) or None, task=env.get(ENV_TASK_ID) or None,
        startup_timeout_s=timeout, progress_token=env.get(ENV_PROGRESS_TOKEN) or None)
