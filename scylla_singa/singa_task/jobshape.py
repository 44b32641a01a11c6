"""What the wrapper reads from job.conf: SINGA 0.3.0's cluster shape and the batch size (pure).

Defaults and the process count are SINGA's own (ClusterProto defaults;
src/utils/cluster.cc): nworker_procs = nworker_groups * nworkers_per_group
/ nworkers_per_procs, likewise for servers; nprocs is their sum when
server_worker_separate, else the larger. Only workers of group 0 write
checkpoints, one file `step<N>-worker<id>` per worker of the group, so a
step is complete when nworkers_per_group files of it are.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import conftext


@dataclass(frozen=True)
class JobShape:
    name: str
    nworker_groups: int
    nserver_groups: int
    nworkers_per_group: int
    nservers_per_group: int
    nworkers_per_procs: int
    nservers_per_procs: int
    server_worker_separate: bool
    workspace: str | None
    train_steps: int
    train_batchsize: int | None

    @property
    def nprocs(self) -> int:
        worker_procs = self.nworker_groups * self.nworkers_per_group // self.nworkers_per_procs
        server_procs = self.nserver_groups * self.nservers_per_group // self.nservers_per_procs
        return worker_procs + server_procs if self.server_worker_separate else max(worker_procs, server_procs)

    @property
    def checkpoint_writers(self) -> int:
        """How many `step<N>-worker<K>` files a complete checkpoint step has (group 0's workers)."""
        return self.nworkers_per_group


def _includes_train(text: str, layer: conftext.Field) -> bool:
    children = layer.children or ()
    include = {conftext.scalar(text, f) for f in conftext.find(children, "include")}
    exclude = {conftext.scalar(text, f) for f in conftext.find(children, "exclude")}
    return "kTrain" in include if include else "kTrain" not in exclude


def train_batchsize(text: str, fields: tuple[conftext.Field, ...]) -> int | None:
    """The first training input layer's (first) batchsize: samples per step of one worker group."""
    for layer in conftext.find(fields, "neuralnet.layer"):
        sizes = conftext.find(layer.children or (), "store_conf.batchsize")
        if sizes and _includes_train(text, layer):
            return int(conftext.scalar(text, sizes[0]), 0)
    return None


def read_shape(text: str) -> JobShape:
    """The shape of job.conf `text`; conftext.ConfTextError when it is not text format."""
    fields = conftext.parse(text)

    def value(path: str) -> str | None:
        found = conftext.find(fields, path)
        return conftext.scalar(text, found[-1]) if found else None

    def integer(path: str, default: int) -> int:
        raw = value(path)
        return default if raw is None else int(raw, 0)

    return JobShape(
        name=value("name") or "",
        nworker_groups=integer("cluster.nworker_groups", 1),
        nserver_groups=integer("cluster.nserver_groups", 1),
        nworkers_per_group=integer("cluster.nworkers_per_group", 1),
        nservers_per_group=integer("cluster.nservers_per_group", 1),
        nworkers_per_procs=integer("cluster.nworkers_per_procs", 1),
        nservers_per_procs=integer("cluster.nservers_per_procs", 1),
        server_worker_separate=(value("cluster.server_worker_separate") or "false").lower() in ("true", "1", "t"),
        workspace=value("cluster.workspace"),
        train_steps=integer("train_steps", 0),
        train_batchsize=train_batchsize(text, fields),
    )
