"""The job as the runtime runs it: job.conf through the project's job model, checked for support.

`load_spec` parses with `scylla_singa.jobconf.load_job`, validates with the
job model's own checks, lays processes out with `process_table`, and then
refuses, at start and by name, whatever this runtime does not implement
(a layer type, an algorithm, an updater, a learning-rate change method, an
init method, a store backend, GPUs, model partitioning). Every refusal is a
JobConfError pointing at the field, so `singa` prints FILE:LINE:COL and
exits 2.

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
from .data import CSV_BACKENDS, RECORD_BACKENDS
from .layers import INPUT_TYPES, LAYERS
from .net import Model, build_model
from .params import ParamLayout, SUPPORTED_INITS, slice_bounds
from .updaters import LRSchedule, UpdaterConfig, learning_rate

LT = job_pb2.LayerType


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


def check_supported(parsed: ParsedJob) -> None:
    """Refuse, by name and position, what this runtime does not implement."""
    job = parsed.proto
    alg = job_pb2.AlgType.Name(job.train_one_batch.alg)
    if alg != "kBP":
        raise parsed.error(f"train_one_batch.alg {alg} is not supported by this runtime (supported: kBP)",
                           "train_one_batch.alg")
    if job.gpu:
        raise parsed.error("this runtime trains on CPUs only; remove the gpu field", "gpu")
    if job.neuralnet.partition_dim == 1:
        raise parsed.error("neuralnet.partition_dim 1 (partitioning layers among a group's workers) is not "
                           "supported; this runtime partitions the batch (partition_dim 0)", "neuralnet.partition_dim")
    supported = ", ".join(sorted(LAYERS))
    for i, layer in enumerate(job.neuralnet.layer):  # layer types first: the most useful thing to hear
        kind = LT.Name(layer.type)
        if kind not in LAYERS:
            extra = f' (user_type "{layer.user_type}")' if layer.user_type else ""
            raise parsed.error(f'layer "{layer.name}": type {kind}{extra} is not supported by this runtime '
                               f"(supported: {supported})", f"neuralnet.layer[{i}].type")
    for i, layer in enumerate(job.neuralnet.layer):
        where = f"neuralnet.layer[{i}]"
        kind = LT.Name(layer.type)
        if layer.partition_dim == 1:
            raise parsed.error(f'layer "{layer.name}": partition_dim 1 is not supported', f"{where}.partition_dim")
        if kind in INPUT_TYPES:
            _check_store(parsed, layer, kind, where)
        if kind == "kDropout" and not 0 <= layer.dropout_conf.dropout_ratio < 1:
            raise parsed.error(f'layer "{layer.name}": dropout_ratio must be in [0, 1), got '
                               f"{layer.dropout_conf.dropout_ratio}", f"{where}.dropout_conf.dropout_ratio")
        for k, param in enumerate(layer.param):
            init = job_pb2.InitMethod.Name(param.init.type)
            if param.HasField("init") and init not in SUPPORTED_INITS:
                raise parsed.error(f'layer "{layer.name}": param "{param.name or k}" init type {init} is not '
                                   f"supported (supported: {', '.join(SUPPORTED_INITS)})",
                                   f"{where}.param[{k}].init.type")


def _check_store(parsed: ParsedJob, layer: job_pb2.LayerProto, kind: str, where: str) -> None:
    conf = layer.store_conf
    if not layer.HasField("store_conf"):
        raise parsed.error(f'layer "{layer.name}" ({kind}) needs a store_conf with path, batchsize and shape', where)
    backends = CSV_BACKENDS if kind == "kCSVInput" else RECORD_BACKENDS
    if conf.backend not in backends:
        raise parsed.error(f'layer "{layer.name}": store_conf.backend "{conf.backend}" is not supported for {kind} '
                           f"(supported: {', '.join(repr(b) for b in backends if b)})", f"{where}.store_conf.backend")
    for field, why in (("mean_file", "use mean_value"), ("std_file", "use std_value")):
        if conf.HasField(field):
            raise parsed.error(f'layer "{layer.name}": store_conf.{field} is not supported ({why})',
                               f"{where}.store_conf.{field}")
    if conf.encoded:
        raise parsed.error(f'layer "{layer.name}": store_conf.encoded is not supported', f"{where}.store_conf.encoded")
    if not conf.path:
        raise parsed.error(f'layer "{layer.name}": store_conf.path is missing', f"{where}.store_conf")
    if not conf.batchsize or conf.batchsize[0] <= 0:
        raise parsed.error(f'layer "{layer.name}": store_conf.batchsize must be set and positive',
                           f"{where}.store_conf")
    if not conf.shape or any(d <= 0 for d in conf.shape):
        raise parsed.error(f'layer "{layer.name}": store_conf.shape must list the positive dimensions of a record',
                           f"{where}.store_conf")


__all__ = ["Every", "TrainingSpec", "JobConfError", "load_spec", "check_supported"]
