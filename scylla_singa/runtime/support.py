"""What singa-py implements of SINGA 0.3's job model, and the refusal of everything else.

singa-py (this runtime) trains feed-forward nets with back-propagation on
CPUs. A conf asking for more is refused at start, before any data is read or
socket opened, by name and position (FILE:LINE:COL, exit 2), pointing to
singa:latest, the image of Apache SINGA 0.3 itself, which runs the conf as
written. What is refused: algorithms but kBP; GPUs; model partitioning;
unrolled (recurrent) nets; warm-up steps; Apache SINGA's own checkpoint
files and several checkpoint_path files (pretraining chains); extensions; layer types outside
layers.LAYERS; store backends other than "textfile" for kCSVInput and
"kvfile" for kRecordInput; encoded records; per-partition batch sizes;
several softmaxes per sample; user-defined params; updaters, learning-rate
schedules and init methods outside their modules' SUPPORTED_* lists.

Settings that change speed or memory but not results are accepted and have
no effect here: store_conf.prefetching, share_src_blobs, debug,
num_openblas_threads, cluster.share_memory.
"""

from __future__ import annotations

import re

from scylla_singa.jobconf import JobConfError, ParsedJob, job_pb2

from .data import BACKENDS
from .layers import INPUT_TYPES, LAYERS
from .params import SUPPORTED_INITS
from .updaters import SUPPORTED_LR, SUPPORTED_UPDATERS

REAL_SINGA = "run the job on singa:latest (Apache SINGA 0.3 itself) instead"
LT = job_pb2.LayerType
# Apache SINGA's own checkpoint files (BlobProtos), as its workers name them.
SINGA_CHECKPOINT = re.compile(r"(^|/)step\d+-worker\d+$")


def refused(parsed: ParsedJob, what: str, field: str, supported: str = "") -> JobConfError:
    """The error for a feature singa-py lacks, pointing at `field`."""
    also = f" (it supports {supported})" if supported else ""
    return parsed.error(f"{what} is not supported by singa-py{also}; {REAL_SINGA}", field)


def check_supported(parsed: ParsedJob) -> None:
    """Raise JobConfError for the first thing singa-py cannot run; the job's own shape first, then layers."""
    _check_job(parsed)
    _check_layer_types(parsed)
    _check_extensions(parsed)
    for i, layer in enumerate(parsed.proto.neuralnet.layer):
        _check_layer(parsed, layer, f"neuralnet.layer[{i}]")
    _check_updater(parsed)


def _check_job(parsed: ParsedJob) -> None:
    job = parsed.proto
    alg = job_pb2.AlgType.Name(job.train_one_batch.alg)
    if alg != "kBP":
        raise refused(parsed, f"train_one_batch.alg {alg}", "train_one_batch.alg", "kBP")
    if job.gpu:
        raise refused(parsed, "training on GPUs (gpu)", "gpu", "CPUs only")
    if job.warmup_steps > 0:
        raise refused(parsed, f"warmup_steps {job.warmup_steps}", "warmup_steps")
    _check_checkpoint_paths(parsed)
    if job.neuralnet.partition_dim == 1:
        raise refused(parsed, "neuralnet.partition_dim 1 (splitting layers among a group's workers)",
                      "neuralnet.partition_dim", "partition_dim 0: splitting the batch")
    if job.neuralnet.unroll_len != 1 or job.neuralnet.layer_group:
        raise refused(parsed, "an unrolled recurrent net (neuralnet.unroll_len, layer_group)", "neuralnet.unroll_len")


def _check_checkpoint_paths(parsed: ParsedJob) -> None:
    """singa-py resumes from its own checkpoints; SINGA's files and pretraining chains are SINGA's to read."""
    paths = list(parsed.proto.checkpoint_path)
    if len(paths) > 1:
        raise refused(parsed, f"initialising from {len(paths)} checkpoint_path files (a pretraining chain)",
                      "checkpoint_path", "one checkpoint_path of its own checkpoints")
    if paths and SINGA_CHECKPOINT.search(paths[0].rstrip("/")):
        raise refused(parsed, f'checkpoint_path "{paths[0]}", an Apache SINGA checkpoint file (BlobProtos)',
                      "checkpoint_path", "its own checkpoints: a workspace's checkpoint directory or a "
                      "step<N>-proc<K>.npz file in it")


def _check_layer_types(parsed: ParsedJob) -> None:
    """Layer types first among the layers' checks: the most useful thing to hear."""
    supported = ", ".join(sorted(LAYERS))
    for i, layer in enumerate(parsed.proto.neuralnet.layer):
        kind = LT.Name(layer.type)
        if kind not in LAYERS:
            extra = f' (user_type "{layer.user_type}")' if layer.user_type else ""
            raise refused(parsed, f'layer "{layer.name}": type {kind}{extra}', f"neuralnet.layer[{i}].type", supported)


def _check_extensions(parsed: ParsedJob) -> None:
    for ext in parsed.extensions:
        owner = ext.parent or "the job"
        if ext.layer_index is not None:
            owner = f'layer "{parsed.proto.neuralnet.layer[ext.layer_index].name}"'
        raise JobConfError(f"{owner}: extension [{ext.name}] is not supported by singa-py (it needs the "
                           f"application's own .proto and layers); {REAL_SINGA}", parsed.path, ext.line, ext.col)


def _check_layer(parsed: ParsedJob, layer: job_pb2.LayerProto, where: str) -> None:
    kind = LT.Name(layer.type)
    name = f'layer "{layer.name}"'
    if layer.partition_dim == 1:
        raise refused(parsed, f"{name}: partition_dim 1", f"{where}.partition_dim")
    if layer.unroll_len != 1 or layer.unroll_conn_type or layer.shift:
        raise refused(parsed, f"{name}: unrolling (unroll_len, unroll_conn_type, shift)", f"{where}.unroll_len")
    if kind in INPUT_TYPES:
        _check_store(parsed, layer, kind, where)
    if kind == "kSoftmax" and layer.softmax_conf.num_softmax_per_instance != 1:
        raise refused(parsed, f"{name}: num_softmax_per_instance "
                      f"{layer.softmax_conf.num_softmax_per_instance}", f"{where}.softmax_conf", "1")
    if kind == "kDropout" and not 0 <= layer.dropout_conf.dropout_ratio < 1:
        raise parsed.error(f"{name}: dropout_ratio must be in [0, 1), got {layer.dropout_conf.dropout_ratio}",
                           f"{where}.dropout_conf.dropout_ratio")
    for k, param in enumerate(layer.param):
        label = f'{name}: param "{param.name or k}"'
        if param.type != job_pb2.kParam:
            raise refused(parsed, f'{label}: type {job_pb2.ParamType.Name(param.type)} (user_type '
                          f'"{param.user_type}")', f"{where}.param[{k}].type", "kParam")
        init = job_pb2.InitMethod.Name(param.init.type)
        if param.HasField("init") and init not in SUPPORTED_INITS:
            raise refused(parsed, f"{label}: init type {init}", f"{where}.param[{k}].init.type",
                          ", ".join(SUPPORTED_INITS))


def _check_store(parsed: ParsedJob, layer: job_pb2.LayerProto, kind: str, where: str) -> None:
    conf, name = layer.store_conf, f'layer "{layer.name}"'
    if not layer.HasField("store_conf"):
        raise parsed.error(f"{name} ({kind}) needs a store_conf with backend, path, batchsize and shape", where)
    if not conf.backend:
        raise parsed.error(f'{name}: store_conf.backend is not set; SINGA 0.3 needs "{BACKENDS[kind]}" for {kind} '
                           'here ("kvfile" for SINGA\'s KVFile records, "textfile" for CSV)', f"{where}.store_conf")
    if conf.backend != BACKENDS[kind]:
        raise refused(parsed, f'{name}: store_conf.backend "{conf.backend}" for {kind}', f"{where}.store_conf.backend",
                      f'"{BACKENDS[kind]}" for {kind}')
    if conf.encoded:
        raise refused(parsed, f"{name}: encoded (compressed) images, store_conf.encoded", f"{where}.store_conf.encoded")
    if not conf.path:
        raise parsed.error(f"{name}: store_conf.path is missing", f"{where}.store_conf")
    if len(conf.batchsize) > 1:
        raise refused(parsed, f"{name}: one store_conf.batchsize per partition", f"{where}.store_conf.batchsize",
                      "a single batchsize")
    if not conf.batchsize or conf.batchsize[0] <= 0:
        raise parsed.error(f"{name}: store_conf.batchsize must be set and positive", f"{where}.store_conf")
    if not conf.shape or any(d <= 0 for d in conf.shape):
        raise parsed.error(f"{name}: store_conf.shape must list the positive dimensions of a record",
                           f"{where}.store_conf")


def _check_updater(parsed: ParsedJob) -> None:
    updater = parsed.proto.updater
    kind = job_pb2.UpdaterType.Name(updater.type)
    if kind not in SUPPORTED_UPDATERS:
        raise refused(parsed, f"updater type {kind}", "updater.type", ", ".join(SUPPORTED_UPDATERS))
    change = job_pb2.ChangeMethod.Name(updater.learning_rate.type)
    if change not in SUPPORTED_LR:
        raise refused(parsed, f"learning_rate type {change}", "updater.learning_rate.type", ", ".join(SUPPORTED_LR))
