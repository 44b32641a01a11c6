"""Nets built from NetProto, one per phase, sharing one set of parameters.

A layer belongs to phase P's net when it has no `include` or includes P, and
does not `exclude` P (SINGA's rule); two layers may share a name if they
belong to different phases (the usual train/test input pair). Layers run in
topological order of `srclayers`, ties in file order.

A Model is one replica: its train, test and validation nets, their
parameters bound as views into one flat value vector and one flat gradient
vector (see params.py). Workers own a Model each; servers use only its
layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scylla_singa.jobconf import ParsedJob, job_pb2
from .layers import INPUT_TYPES, InputLayer, LABELLED, Layer, create_layer
from .params import InitSpec, Param, ParamLayout, ParamSpec

PHASE = job_pb2.Phase
PHASES = {"train": PHASE.Value("kTrain"), "test": PHASE.Value("kTest"), "validate": PHASE.Value("kVal")}


def in_phase(layer: job_pb2.LayerProto, phase: int) -> bool:
    """SINGA's include/exclude rule."""
    return (not layer.include or phase in layer.include) and phase not in layer.exclude


@dataclass(frozen=True)
class Metrics:
    """What one forward pass measured; None where the net has no such output."""

    loss: float | None
    accuracy: float | None
    samples: int


class Net:
    """The layers of one phase in execution order, with forward and backward over them."""

    def __init__(self, phase: str, layers: list[Layer], srcs: dict[str, list[Layer]]) -> None:
        self.phase = phase
        self.layers = layers
        self.srcs = srcs
        inputs = [layer for layer in layers if layer.is_input]
        self.input: InputLayer = inputs[0]  # type: ignore[assignment]
        self._outputs: dict[str, np.ndarray] = {}

    def forward(self, train: bool) -> Metrics:
        out = self._outputs
        out.clear()
        loss, accuracy = None, None
        for layer in self.layers:
            inputs = [out[s.name] for s in self.srcs[layer.name]]
            labels = self.srcs[layer.name][1].labels if len(self.srcs[layer.name]) > 1 else None
            out[layer.name] = layer.forward(inputs, train, labels)
            if layer.is_loss:
                loss = (loss or 0.0) + layer.loss
            if accuracy is None and layer.accuracy is not None and layer.type_name in LABELLED:
                accuracy = layer.accuracy
        return Metrics(loss, accuracy, int(out[self.input.name].shape[0]))

    def backward(self) -> None:
        """Gradients of the sum of the losses; parameter gradients are added into param.grad."""
        grads: dict[str, np.ndarray] = {}
        for layer in reversed(self.layers):
            if layer.is_input:
                continue
            if layer.is_loss:
                gin = layer.backward(None)
            elif layer.name in grads:
                gin = layer.backward(grads.pop(layer.name))
            else:
                continue
            for src, g in zip(self.srcs[layer.name], gin):
                if g is None or src.is_input:
                    continue
                grads[src.name] = grads[src.name] + g if src.name in grads else g


class Model:
    """One replica of the job's model: nets per phase over flat parameter buffers."""

    def __init__(self, nets: dict[str, Net], params: dict[str, Param], layout: ParamLayout, dtype) -> None:
        self.nets = nets
        self.params = params
        self.layout = layout
        self.values = np.zeros(layout.total, dtype=dtype)
        self.grads = np.zeros(layout.total, dtype=dtype)
        layout.bind(params, self.values, self.grads)

    def dropout_layers(self):
        return [layer for net in self.nets.values() for layer in net.layers if layer.type_name == "kDropout"]


def build_model(parsed: ParsedJob, dtype=np.float32) -> Model:
    """Build every phase's net of the job. Raises JobConfError naming the layer on a bad net."""
    registry: dict[str, Param] = {}
    nets: dict[str, Net] = {}
    for phase in ("train", "test", "validate"):
        net = _build_net(parsed, phase, registry, dtype)
        if net is not None:
            nets[phase] = net
    if "train" not in nets:
        raise parsed.error("the neuralnet has no layers for the training phase", "neuralnet")
    owners: list[ParamSpec] = []
    seen: set[int] = set()
    for p in registry.values():
        if id(p) not in seen:
            seen.add(id(p))
            owners.append(p.spec)
    unique = {p.spec.name: p for p in registry.values()}
    return Model(nets, unique, ParamLayout(tuple(owners)), dtype)


def _build_net(parsed: ParsedJob, phase: str, registry: dict[str, Param], dtype) -> Net | None:
    protos = [(i, layer) for i, layer in enumerate(parsed.proto.neuralnet.layer) if in_phase(layer, PHASES[phase])]
    if phase != "train" and not any(job_pb2.LayerType.Name(layer.type) in INPUT_TYPES for _, layer in protos):
        return None  # no input for this phase: the job has no test (or validation) net
    if not protos:
        return None
    by_name: dict[str, tuple[int, job_pb2.LayerProto]] = {}
    for i, layer in protos:
        if layer.name in by_name:
            raise parsed.error(f'two layers named "{layer.name}" in the {phase} phase; give them different '
                               "names or include/exclude them by phase", f"neuralnet.layer[{i}]")
        by_name[layer.name] = (i, layer)
    order = _topological(parsed, phase, protos, by_name)
    layers: dict[str, Layer] = {}
    srcs: dict[str, list[Layer]] = {}
    for i, proto in order:
        layer = create_layer(proto)
        where = f"neuralnet.layer[{i}]"
        srcs[layer.name] = [layers[s] for s in proto.srclayers]
        lo, hi = layer.nsrc
        if not lo <= len(proto.srclayers) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise parsed.error(f'layer "{layer.name}" ({layer.type_name or "input"}) needs {want} srclayers, '
                               f"has {len(proto.srclayers)}", f"{where}.srclayers")
        if layer.type_name in LABELLED:
            label_src = srcs[layer.name][1]
            if not label_src.is_input or not label_src.proto.store_conf.has_label:
                raise parsed.error(f'layer "{layer.name}": its second srclayer "{label_src.name}" must be an '
                                   "input layer with labels", f"{where}.srclayers")
        try:
            layer.setup([s.out_shape for s in srcs[layer.name]], _param_maker(parsed, proto, i, registry, dtype))
        except ValueError as exc:
            raise parsed.error(f'layer "{layer.name}": {exc}', where) from None
        layers[layer.name] = layer
    inputs = [layer for layer in layers.values() if layer.is_input]
    if len(inputs) != 1:
        raise parsed.error(f"the {phase} phase has {len(inputs)} input layers; this runtime needs exactly one "
                           "(kCSVInput or kRecordInput) per phase", "neuralnet")
    return Net(phase, list(layers.values()), srcs)


def _topological(parsed: ParsedJob, phase: str, protos, by_name) -> list[tuple[int, job_pb2.LayerProto]]:
    done: set[str] = set()
    order: list[tuple[int, job_pb2.LayerProto]] = []
    pending = list(protos)
    while pending:
        ready = [(i, layer) for i, layer in pending if all(s in done for s in layer.srclayers)]
        if not ready:
            i, layer = pending[0]
            missing = [s for s in layer.srclayers if s not in by_name]
            if missing:
                raise parsed.error(f'layer "{layer.name}" reads from "{missing[0]}", which is not in the {phase} '
                                   "phase", f"neuralnet.layer[{i}].srclayers")
            raise parsed.error(f'the {phase} net has a cycle through layer "{layer.name}"', f"neuralnet.layer[{i}]")
        for item in ready:
            order.append(item)
            done.add(item[1].name)
        pending = [item for item in pending if item[1].name not in done]
    return order


def _param_maker(parsed: ParsedJob, proto: job_pb2.LayerProto, index: int, registry: dict[str, Param], dtype):
    def make(i: int, role: str, shape: tuple[int, ...], default: InitSpec) -> Param:
        where = f"neuralnet.layer[{index}].param[{i}]"
        pp = proto.param[i] if i < len(proto.param) else None
        name = (pp.name if pp is not None and pp.name else f"{proto.name}_{role}")
        if pp is not None and pp.share_from:
            owner = registry.get(pp.share_from)
            if owner is None:
                raise parsed.error(f'layer "{proto.name}": param "{name}" shares from unknown param '
                                   f'"{pp.share_from}" (it must be declared by an earlier layer)', where)
            if owner.spec.shape != shape:
                raise parsed.error(f'layer "{proto.name}": param "{name}" has shape {shape} but shares from '
                                   f'"{pp.share_from}" of shape {owner.spec.shape}', where)
            registry[name] = owner
            return owner
        existing = registry.get(name)
        if existing is not None:
            if existing.spec.shape != shape:
                raise parsed.error(f'layer "{proto.name}": param "{name}" is declared twice with shapes '
                                   f"{existing.spec.shape} and {shape}", where)
            return existing
        init = InitSpec.from_proto(pp.init) if pp is not None and pp.HasField("init") else default
        spec = ParamSpec(name, tuple(int(d) for d in shape), init,
                         pp.lr_scale if pp is not None else 1.0, pp.wd_scale if pp is not None else 1.0)
        param = Param(spec, dtype)
        registry[name] = param
        return param
    return make
