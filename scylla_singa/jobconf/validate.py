"""Checks a parsed job.conf beyond what the protobuf grammar enforces.

SINGA's `required` fields are checked by the parser already (as SINGA's own
parser does). This module checks what a job needs to be run and laid out:
a name, a positive number of training steps, a net whose layers name known
sources, and a cluster section SINGA's process rules can lay out. Whether
the runtime implements a layer type is the runtime's own check at start.
"""

from __future__ import annotations

from .errors import JobConfError
from .parse import ParsedJob
from .processes import ClusterShape, ProcessLayoutError, check_shape

_NON_NEGATIVE = ("disp_freq", "test_freq", "test_steps", "validate_freq", "validate_steps",
                 "checkpoint_freq", "checkpoint_after", "disp_after", "test_after", "validate_after",
                 "warmup_steps")


def validate_job(parsed: ParsedJob) -> None:
    """Raise JobConfError for the first structural problem found, positioned where possible."""
    job = parsed.proto
    if not job.name:
        raise parsed.error('missing "name": add a line like  name: "my-job"', "name")
    if not job.HasField("train_steps") or job.train_steps <= 0:
        raise parsed.error("train_steps must be set to a positive number of training steps (without it SINGA "
                           "stops before the first step; a conf meant for `singa -test`, such as SINGA's "
                           "char-rnn sample.conf, is not a training job scylla-singa runs)", "train_steps")
    for field in _NON_NEGATIVE:
        if getattr(job, field) < 0:
            raise parsed.error(f"{field} must not be negative, got {getattr(job, field)}", field)
    _validate_net(parsed)
    try:
        check_shape(ClusterShape.from_proto(job.cluster))
    except ProcessLayoutError as exc:
        raise parsed.error(str(exc), f"cluster.{exc.field}") from None


def _validate_net(parsed: ParsedJob) -> None:
    layers = parsed.proto.neuralnet.layer
    if not layers:
        raise parsed.error("the neuralnet has no layers: add  neuralnet { layer { name: ... type: ... } }",
                           "neuralnet")
    names = {layer.name for layer in layers}
    for i, layer in enumerate(layers):
        where = f"neuralnet.layer[{i}]"
        if not layer.name:
            raise parsed.error(f"layer #{i + 1} has no name", where)
        if not layer.HasField("type") and not layer.user_type:
            raise parsed.error(f'layer "{layer.name}" has no type (e.g. type: kInnerProduct)', where)
        for src in layer.srclayers:
            if src not in names:
                raise parsed.error(f'layer "{layer.name}" reads from unknown layer "{src}"', f"{where}.srclayers")
        if layer.HasField("innerproduct_conf") and layer.innerproduct_conf.num_output <= 0:
            raise parsed.error(f'layer "{layer.name}": innerproduct_conf.num_output must be positive',
                               f"{where}.innerproduct_conf.num_output")


def validated(parsed: ParsedJob) -> ParsedJob:
    """`parsed`, after validate_job passed; convenient in pipelines."""
    validate_job(parsed)
    return parsed


__all__ = ["JobConfError", "validate_job", "validated"]
