"""Estimate a network's size from job.conf alone: parameters and activations.

The framework must ask Mesos for memory and bandwidth before any process has
run, so it infers layer output shapes the way SINGA's layers would and counts
parameters (shared ones once). Unknown layer types pass their input shape
through; the estimate only sizes resource requests, it never runs the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import job_pb2

L = job_pb2.LayerType
_INPUT = {L.Value(n) for n in ("kCSVInput", "kRecordInput", "kShardData", "kLMDBData", "kCharRNN")}
# SINGA's deprecated parsers of kShardData records: their output shape is the data set's.
_MNIST_SIDE = 28
_RGB_SHAPE = (3, 32, 32)
_CONV = {L.Value(n) for n in ("kConvolution", "kCConvolution", "kCudnnConv")}
_POOL = {L.Value(n) for n in ("kPooling", "kCPooling", "kCudnnPool")}
_SCALAR_OUT = {L.Value(n) for n in ("kSoftmaxLoss", "kEuclideanLoss", "kCudnnSoftmaxLoss", "kAccuracy")}

Shape = tuple[int, ...]
# Element counts saturate here (2**48 floats: a petabyte tensor): a conf listing thousands of huge
# dimensions would otherwise make numbers too big for a float and a plan that ends in OverflowError.
MAX_ELEMENTS = 2**48


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
        activations += _elements(out_shape)
    return ModelSize(param_count=params, batch_size=batch, activations_per_sample=activations)


def _elements(shape: Shape) -> int:
    """The number of elements of `shape`, saturating at MAX_ELEMENTS (and stopping there: shapes come from users)."""
    count = 1
    for dim in shape:
        count *= max(dim, 0)
        if count >= MAX_ELEMENTS:
            return MAX_ELEMENTS
    return count


def _batch_size(layer: job_pb2.LayerProto) -> int:
    if layer.store_conf.batchsize:
        return max(layer.store_conf.batchsize)
    for conf in (layer.sharddata_conf, layer.lmdbdata_conf, layer.char_rnn_conf):
        if conf.batchsize > 0:
            return conf.batchsize
    return 1


def _shared(layer: job_pb2.LayerProto, index: int) -> bool:
    return index < len(layer.param) and bool(layer.param[index].share_from)


def _image(shape: Shape) -> tuple[int, int, int]:
    """(channels, height, width) of a per-sample shape, as SINGA reads the last three dimensions."""
    if len(shape) >= 3:
        return shape[-3], shape[-2], shape[-1]
    if len(shape) == 2:
        return 1, shape[0], shape[1]
    return 1, _elements(shape), 1


def _window(conf: job_pb2.ConvolutionProto | job_pb2.PoolingProto) -> tuple[tuple[int, int], ...]:
    """(kernel, pad, stride) as (y, x) pairs: the square field when set, else the _y/_x ones (SINGA's rule)."""
    def pair(square: str) -> tuple[int, int]:
        if conf.HasField(square):
            return getattr(conf, square), getattr(conf, square)
        return getattr(conf, f"{square}_y"), getattr(conf, f"{square}_x")
    return pair("kernel"), pair("pad"), pair("stride")


def _slide(size: int, kernel: int, pad: int, stride: int) -> int:
    return max(1, (size + 2 * pad - kernel) // max(1, stride) + 1)


def _layer_shape(layer: job_pb2.LayerProto, in_shape: Shape) -> tuple[Shape, int]:
    """Output shape of `layer` and the parameters it owns, given its input shape."""
    t = layer.type
    n_in = _elements(in_shape)
    if t in _INPUT:
        return tuple(layer.store_conf.shape) or (1,), 0
    if t == L.Value("kInnerProduct"):
        out = layer.innerproduct_conf.num_output
        bias = out if layer.innerproduct_conf.bias_term else 0
        return (out,), (0 if _shared(layer, 0) else n_in * out) + (0 if _shared(layer, 1) else bias)
    if t in _CONV:
        conf = layer.convolution_conf
        c, h, w = _image(in_shape)
        (ky, kx), (py, px), (sy, sx) = _window(conf)
        nf = conf.num_filters
        out = (nf, _slide(h, ky, py, sy), _slide(w, kx, px, sx))
        weight = 0 if _shared(layer, 0) else nf * c * ky * kx
        bias = nf if len(layer.param) > 1 and not _shared(layer, 1) else 0  # SINGA: a bias iff a second param
        return out, weight + bias
    if t in _POOL:
        if len(in_shape) < 2:
            return in_shape, 0
        c, h, w = _image(in_shape)
        (ky, kx), (py, px), (sy, sx) = _window(layer.pooling_conf)
        return (c, _slide(h, ky, py, sy), _slide(w, kx, px, sx)), 0
    if t == L.Value("kImagePreprocess") and len(in_shape) >= 3 and layer.rgbimage_conf.cropsize:
        crop = layer.rgbimage_conf.cropsize
        return (in_shape[0], crop, crop), 0
    if t == L.Value("kMnist"):
        side = layer.mnist_conf.resize or _MNIST_SIDE
        return (side, side), 0
    if t == L.Value("kRGBImage"):
        crop = layer.rgbimage_conf.cropsize
        return ((_RGB_SHAPE[0], crop, crop) if crop else _RGB_SHAPE), 0
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
