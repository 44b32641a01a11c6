"""Estimate a network's size from job.conf alone: parameters and activations.

The framework must ask Mesos for memory and bandwidth before any process has
run, so it infers layer output shapes the way SINGA's layers would and counts
parameters (shared ones once). Unknown layer types pass their input shape
through; the estimate only sizes resource requests, it never runs the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import job_pb2

L = job_pb2.LayerType
_INPUT = {L.Value(n) for n in ("kCSVInput", "kRecordInput", "kShardData", "kLMDBData", "kMnist",
                               "kRGBImage", "kCharRNNInput", "kOneHot", "kPrefetch")}
_CONV = {L.Value(n) for n in ("kConvolution", "kCConvolution", "kCudnnConv")}
_POOL = {L.Value(n) for n in ("kPooling", "kCPooling", "kCudnnPool")}
_SCALAR_OUT = {L.Value(n) for n in ("kSoftmaxLoss", "kEuclideanLoss", "kCudnnSoftmaxLoss", "kAccuracy")}

Shape = tuple[int, ...]


@dataclass(frozen=True)
class ModelSize:
    """What one replica of the model weighs: parameters, batch and activations."""

    param_count: int
    batch_size: int
    activations_per_sample: int

    @property
    def param_bytes(self) -> int:
        return 4 * self.param_count


def training_layers(net: job_pb2.NetProto) -> list[job_pb2.LayerProto]:
    """The layers present in the training phase (SINGA's include/exclude rules)."""
    train = job_pb2.Phase.Value("kTrain")
    return [layer for layer in net.layer
            if (not layer.include or train in layer.include) and train not in layer.exclude]


def estimate_model_size(net: job_pb2.NetProto) -> ModelSize:
    """Parameter count, batch size and activation floats per sample of the training net."""
    shapes: dict[str, Shape] = {}
    params = 0
    activations = 0
    batch = 1
    for layer in training_layers(net):
        src = [shapes[s] for s in layer.srclayers if s in shapes]
        in_shape = src[0] if src else (1,)
        out_shape, layer_params = _layer_shape(layer, in_shape)
        if layer.type in _INPUT:
            batch = max(batch, _batch_size(layer))
        shapes[layer.name] = out_shape
        params += layer_params
        activations += math.prod(out_shape)
    return ModelSize(param_count=params, batch_size=batch, activations_per_sample=activations)


def _batch_size(layer: job_pb2.LayerProto) -> int:
    for conf in (layer.store_conf, layer.sharddata_conf, layer.lmdbdata_conf):
        if conf.batchsize:
            return max(conf.batchsize)
    return 1


def _shared(layer: job_pb2.LayerProto, index: int) -> bool:
    return index < len(layer.param) and bool(layer.param[index].share_from)


def _layer_shape(layer: job_pb2.LayerProto, in_shape: Shape) -> tuple[Shape, int]:
    """Output shape of `layer` and the parameters it owns, given its input shape."""
    t = layer.type
    n_in = math.prod(in_shape)
    if t in _INPUT:
        shape = tuple(layer.store_conf.shape) or tuple(layer.sharddata_conf.shape) or (1,)
        return shape, 0
    if t == L.Value("kInnerProduct"):
        out = layer.innerproduct_conf.num_output
        bias = out if layer.innerproduct_conf.bias_term else 0
        return (out,), (0 if _shared(layer, 0) else n_in * out) + (0 if _shared(layer, 1) else bias)
    if t in _CONV:
        conf = layer.convolution_conf
        c, h, w = (in_shape + (1, 1, 1))[:3] if len(in_shape) >= 3 else (1, n_in, 1)
        k, p, s = conf.kernel, conf.pad, conf.stride
        oh, ow = max(1, (h + 2 * p - k) // s + 1), max(1, (w + 2 * p - k) // s + 1)
        nf = conf.num_filters
        return (nf, oh, ow), nf * c * k * k + (nf if conf.bias_term else 0)
    if t in _POOL:
        conf = layer.pooling_conf
        if len(in_shape) < 3:
            return in_shape, 0
        c, h, w = in_shape[:3]
        k, p, s = conf.kernel, conf.pad, max(1, conf.stride)
        return (c, max(1, (h + 2 * p - k) // s + 1), max(1, (w + 2 * p - k) // s + 1)), 0
    if t == L.Value("kImagePreprocess") and len(in_shape) >= 3 and layer.rgbimage_preprocess_conf.cropsize:
        crop = layer.rgbimage_preprocess_conf.cropsize
        return (in_shape[0], crop, crop), 0
    if t in (L.Value("kRBMVis"), L.Value("kRBMHid")):
        hdim = layer.rbm_conf.hdim
        if t == L.Value("kRBMVis"):
            return in_shape, (0 if _shared(layer, 0) else n_in * hdim) + n_in
        return (hdim,), hdim
    if t == L.Value("kGRU"):
        h = layer.gru_conf.dim_hidden
        return (h,), 3 * (n_in * h + h * h) + (3 * h if layer.gru_conf.bias_term else 0)
    if t == L.Value("kEmbedding"):
        conf = layer.embedding_conf
        return (conf.feature_dim,), conf.vocab_size * conf.feature_dim
    if t == L.Value("kDummy") and layer.dummy_conf.shape:
        return tuple(layer.dummy_conf.shape), 0
    if t in _SCALAR_OUT:
        return (1,), 0
    return in_shape, 0
