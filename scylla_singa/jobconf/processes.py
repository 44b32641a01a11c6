"""SINGA v0's process model: which workers and servers each process hosts.

Pure functions over ClusterShape, the cluster section reduced to the numbers
that matter. The rules are SINGA's own (src/utils/cluster.cc in v0.3):

    nworker_procs = nworker_groups * nworkers_per_group / nworkers_per_procs
    nserver_procs = nserver_groups * nservers_per_group / nservers_per_procs
    nprocs = nworker_procs + nserver_procs  if server_worker_separate
           = max(nworker_procs, nserver_procs) otherwise

SINGA never checked that the divisions are exact; we do, because an inexact
one silently drops workers.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import job_pb2

WorkerId = tuple[int, int]  # (group, id within the group)
ServerId = tuple[int, int]


class ProcessLayoutError(ValueError):
    """The cluster section cannot be laid out; `field` names the culprit."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ClusterShape:
    """The numbers of a ClusterProto that decide the process layout."""

    nworker_groups: int = 1
    nserver_groups: int = 1
    nworkers_per_group: int = 1
    nservers_per_group: int = 1
    nworkers_per_procs: int = 1
    nservers_per_procs: int = 1
    server_worker_separate: bool = False
    sync_freq: int = 1
    start_port: int = 6723

    @classmethod
    def from_proto(cls, cluster: job_pb2.ClusterProto) -> "ClusterShape":
        return cls(
            nworker_groups=cluster.nworker_groups,
            nserver_groups=cluster.nserver_groups,
            nworkers_per_group=cluster.nworkers_per_group,
            nservers_per_group=cluster.nservers_per_group,
            nworkers_per_procs=cluster.nworkers_per_procs,
            nservers_per_procs=cluster.nservers_per_procs,
            server_worker_separate=cluster.server_worker_separate,
            sync_freq=cluster.sync_freq,
            start_port=cluster.start_port,
        )

    @property
    def nworkers(self) -> int:
        return self.nworker_groups * self.nworkers_per_group

    @property
    def nservers(self) -> int:
        return self.nserver_groups * self.nservers_per_group

    @property
    def nworker_procs(self) -> int:
        return self.nworkers // self.nworkers_per_procs

    @property
    def nserver_procs(self) -> int:
        return self.nservers // self.nservers_per_procs

    @property
    def nprocs(self) -> int:
        if self.server_worker_separate:
            return self.nworker_procs + self.nserver_procs
        return max(self.nworker_procs, self.nserver_procs)


@dataclass(frozen=True)
class ProcessSpec:
    """One SINGA process: its id and the workers and servers it hosts."""

    id: int
    workers: tuple[WorkerId, ...]
    servers: tuple[ServerId, ...]


def check_shape(shape: ClusterShape) -> None:
    """Raise ProcessLayoutError unless SINGA's rules give a well-defined layout."""
    for name in ("nworker_groups", "nserver_groups", "nworkers_per_group",
                 "nservers_per_group", "nworkers_per_procs", "nservers_per_procs", "sync_freq"):
        value = getattr(shape, name)
        if value < 1:
            raise ProcessLayoutError(f"{name} must be at least 1, got {value}", name)
    if not 1 <= shape.start_port <= 65535:
        raise ProcessLayoutError(f"start_port must be a TCP port (1-65535), got {shape.start_port}", "start_port")
    if shape.nworkers % shape.nworkers_per_procs:
        raise ProcessLayoutError(
            f"nworkers_per_procs ({shape.nworkers_per_procs}) must divide nworker_groups * nworkers_per_group "
            f"({shape.nworker_groups} * {shape.nworkers_per_group} = {shape.nworkers})", "nworkers_per_procs")
    if shape.nservers % shape.nservers_per_procs:
        raise ProcessLayoutError(
            f"nservers_per_procs ({shape.nservers_per_procs}) must divide nserver_groups * nservers_per_group "
            f"({shape.nserver_groups} * {shape.nservers_per_group} = {shape.nservers})", "nservers_per_procs")
    if shape.nworker_groups % shape.nserver_groups:
        raise ProcessLayoutError(
            f"nserver_groups ({shape.nserver_groups}) must divide nworker_groups ({shape.nworker_groups}): "
            "each server group serves the same number of worker groups", "nserver_groups")


def server_group_of(shape: ClusterShape, worker_group: int) -> int:
    """The server group that worker group `worker_group` trains against (SINGA's rule)."""
    return worker_group // (shape.nworker_groups // shape.nserver_groups)


def worker_process(shape: ClusterShape, group: int, worker: int) -> int:
    """The process id hosting worker (group, worker)."""
    return (group * shape.nworkers_per_group + worker) // shape.nworkers_per_procs


def server_process(shape: ClusterShape, group: int, server: int) -> int:
    """The process id hosting server (group, server); past all worker processes when separate."""
    pid = (group * shape.nservers_per_group + server) // shape.nservers_per_procs
    return pid + shape.nworker_procs if shape.server_worker_separate else pid


def process_table(shape: ClusterShape) -> tuple[ProcessSpec, ...]:
    """Every process 0..nprocs-1 with the workers and servers it hosts. Raises ProcessLayoutError."""
    check_shape(shape)
    workers: list[list[WorkerId]] = [[] for _ in range(shape.nprocs)]
    servers: list[list[ServerId]] = [[] for _ in range(shape.nprocs)]
    for g in range(shape.nworker_groups):
        for j in range(shape.nworkers_per_group):
            workers[worker_process(shape, g, j)].append((g, j))
    for g in range(shape.nserver_groups):
        for j in range(shape.nservers_per_group):
            servers[server_process(shape, g, j)].append((g, j))
    return tuple(ProcessSpec(k, tuple(workers[k]), tuple(servers[k])) for k in range(shape.nprocs))
