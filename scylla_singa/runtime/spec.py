"""The job as the runtime runs it: job.conf through the project's job model, checked for support.

`load_spec` parses with `scylla_singa.jobconf.load_job`, validates with the
job model's own checks, lays processes out with `process_table`, and then
refuses, at start and by name, whatever this runtime does not implement
(support.py). Every refusal is a JobConfError pointing at the field, so
`singa` prints FILE:LINE:COL and exits 2.

Step rules ("Now" in SINGA v0), over steps *completed*: an action with
frequency f and start a is due after step s when f > 0, s >= a and
(s - a) % f == 0.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from scylla_singa.jobconf import ClusterShape, JobConfError, ParsedJob, ProcessSpec, job_pb2, load_job, process_table
from scylla_singa.jobconf.processes import ProcessLayoutError, server_group_of
from scylla_singa.jobconf.validate import validate_job

from .net import Model, build_model
from .params import ParamLayout, slice_bounds
from .support import check_supported
from .updaters import LRSchedule, UpdaterConfig, learning_rate


@dataclass(frozen=True)
class Every:
    """SINGA's `*_freq` / `*_after` pair."""

    freq: int = 0
    after: int = 0

    def due(self, step: int) -> bool:
        return self.freq > 0 and step >= self.after and (step - self.after) % self.freq == 0


@dataclass(frozen=True)
class TrainingSpec:
    """Everything a process needs to know about the job, computed once at start."""

    parsed: ParsedJob
    name: str
    shape: ClusterShape
    procs: tuple[ProcessSpec, ...]
    train_steps: int
    display: Every
    test: Every
    test_steps: int
    validate: Every
    validate_steps: int
    checkpoint: Every
    updater: UpdaterConfig
    lr: LRSchedule
    seed: int
    layout: ParamLayout

    @property
    def proto(self) -> job_pb2.JobProto:
        return self.parsed.proto

    @property
    def nprocs(self) -> int:
        return len(self.procs)

    def server_bounds(self) -> list[tuple[int, int]]:
        """The flat-vector range each server of a group owns (the same in every group)."""
        return slice_bounds(self.layout.total, self.shape.nservers_per_group)

    def server_group_of(self, worker_group: int) -> int:
        return server_group_of(self.shape, worker_group)

    def worker_groups_of(self, server_group: int) -> list[int]:
        return [g for g in range(self.shape.nworker_groups) if self.server_group_of(g) == server_group]

    def owner(self) -> dict[tuple[str, int, int], int]:
        """(kind, group, id) of every worker ("w") and server ("s") -> the process hosting it."""
        out: dict[tuple[str, int, int], int] = {}
        for p in self.procs:
            out.update({("w", g, j): p.id for g, j in p.workers})
            out.update({("s", g, j): p.id for g, j in p.servers})
        return out

    def checkpoint_due(self, step: int) -> bool:
        """Whether servers write a checkpoint once `step` steps are done (also at the very end)."""
        return self.checkpoint.freq > 0 and (self.checkpoint.due(step) or step == self.train_steps)

    def build_model(self) -> Model:
        return build_model(self.parsed)


def load_spec(path: str | Path) -> TrainingSpec:
    """Parse, validate and check job.conf for this runtime. Raises JobConfError."""
    parsed = load_job(path)
    validate_job(parsed)
    job = parsed.proto
    try:
        procs = process_table(ClusterShape.from_proto(job.cluster))
    except ProcessLayoutError as exc:
        raise parsed.error(str(exc), f"cluster.{exc.field}") from None
    check_supported(parsed)
    try:
        updater = UpdaterConfig.from_proto(job.updater)
    except ValueError as exc:
        raise parsed.error(str(exc), "updater.type") from None
    try:
        lr = learning_rate(job.updater.learning_rate)
    except ValueError as exc:
        raise parsed.error(str(exc), "updater.learning_rate") from None
    model = build_model(parsed)
    if model.layout.total == 0:
        raise parsed.error("the training net has no parameters to train", "neuralnet")
    if model.layout.total < ClusterShape.from_proto(job.cluster).nservers_per_group:
        raise parsed.error(f"{model.layout.total} parameters cannot be sliced among "
                           f"{job.cluster.nservers_per_group} servers per group", "cluster.nservers_per_group")
    return TrainingSpec(
        parsed=parsed, name=job.name, shape=ClusterShape.from_proto(job.cluster), procs=procs,
        train_steps=job.train_steps, display=Every(job.disp_freq, job.disp_after),
        test=Every(job.test_freq, job.test_after), test_steps=job.test_steps,
        validate=Every(job.validate_freq, job.validate_after), validate_steps=job.validate_steps,
        checkpoint=Every(job.checkpoint_freq, job.checkpoint_after), updater=updater, lr=lr,
        seed=zlib.crc32(job.name.encode()), layout=model.layout)


__all__ = ["Every", "TrainingSpec", "JobConfError", "load_spec", "check_supported"]
