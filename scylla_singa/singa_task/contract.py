"""The task's inputs, as the framework hands them over (docs/contracts.md), and their checks.

    singa-task -conf JOB.conf [-procs_id K] [-cluster FILE] [-workspace DIR] [-resume]
               [-startup_timeout S]

The flags are the Python runtime's (the same command template serves both
images). Environment: SCYLLA_JOB_ID, SCYLLA_PROC_ID (when -procs_id is
absent), SCYLLA_PROGRESS_URL, MESOS_TASK_ID, and for real SINGA also
SCYLLA_ZK_HOSTS (ZooKeeper connect string, needed by jobs of more than one
process), SCYLLA_ATTEMPT (the gang's attempt number, the same for every
task of an attempt; default 1) and SCYLLA_STARTUP_TIMEOUT (seconds,
default 120). Anything wrong here is a BadInput: exit 2, one line.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class BadInput(ValueError):
    """A flag, variable or file of the contract is missing or wrong (exit 2)."""


@dataclass(frozen=True)
class Peer:
    id: int
    host: str
    port: int


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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput(f"singa-task: {message} (usage: {' '.join(self.format_usage().split()[1:])})")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="singa-task", allow_abbrev=False, add_help=False,
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
        raw = json.loads(path.read_text())
        peers = tuple(Peer(int(p["id"]), str(p["host"]), int(p.get("port", 0))) for p in raw["procs"])
        nprocs = int(raw.get("nprocs", len(peers)))
    except OSError as exc:
        raise BadInput(f"{path}: cannot read the cluster file: {exc.strerror}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{path}: not a cluster file ({{\"nprocs\", \"procs\": [{{\"id\", \"host\", \"port\"}}]}}):"
                       f" {exc}") from exc
    if sorted(p.id for p in peers) != list(range(nprocs)):
        raise BadInput(f"{path}: procs must have ids 0..{nprocs - 1}")
    return nprocs, peers


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
        raw = env.get("SCYLLA_PROC_ID", "0")
        if not raw.isdigit():
            raise BadInput(f"singa-task: SCYLLA_PROC_ID={raw!r} is not a process id")
        proc = int(raw)
    if proc < 0:
        raise BadInput(f"singa-task: -procs_id {proc} must be >= 0")
    nprocs, peers = read_cluster(Path(args.cluster)) if args.cluster else (None, None)
    if nprocs is not None and proc >= nprocs:
        raise BadInput(f"singa-task: -procs_id {proc} but {args.cluster} has {nprocs} processes")
    timeout = args.startup_timeout or _number(env, "SCYLLA_STARTUP_TIMEOUT", 120.0)
    return TaskInputs(
        conf=Path(args.conf), proc=proc, cluster=peers, cluster_nprocs=nprocs, workspace=args.workspace,
        resume=args.resume, job=env.get("SCYLLA_JOB_ID") or None,
        attempt=int(_number(env, "SCYLLA_ATTEMPT", 1, int)), zk_hosts=env.get("SCYLLA_ZK_HOSTS") or None,
        progress_url=env.get("SCYLLA_PROGRESS_URL") or None, task=env.get("MESOS_TASK_ID") or None,
        startup_timeout_s=timeout)
