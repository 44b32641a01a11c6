"""The layers this runtime implements, each a small class with setup, forward and backward.

Conventions (SINGA v0.3's, where it had them):

- Arrays are (batch, ...) with the batch first; `setup` works on per-sample
  shapes and creates the layer's parameters through `make_param`.
- `forward(inputs, train)` returns the layer's output; `backward(grad)`
  returns one gradient per source layer (None where none flows) and *adds*
  parameter gradients into `param.grad`, so shared parameters accumulate.
- Loss layers (`is_loss`) take the gradient of their own scalar loss in
  `backward(None)` and record `loss` and `accuracy` in `forward`.
- kInnerProduct stores its weight as (num_output, fan_in) and computes
  x·Wᵀ + b (transpose: true stores (fan_in, num_output) and computes x·W + b).
- kSTanh is SINGA's scaled tanh, 1.7159047·tanh(0.6666667·x).
- kDropout keeps a unit with probability 1 - dropout_ratio and scales kept
  units by 1 / (1 - dropout_ratio) while training; it is the identity in test.
- kSoftmaxLoss's second source is the input layer whose labels it reads;
  its loss is scale · mean(-log p[label]); accuracy is top-k (softmaxloss_conf.topk).
- kAccuracy reports top-k accuracy (argsort_conf.topk) of its first source's
  scores against the labels of its second, and passes no gradient.
- kEuclideanLoss is 0.5·mean over the batch of ‖a − b‖², b being its second source's output.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from scylla_singa.jobconf import job_pb2
from .params import InitSpec, Param

Shape = tuple[int, ...]
MakeParam = Callable[[int, str, Shape, InitSpec], Param]

STANH_A = 1.7159047
STANH_B = 0.6666667


class Layer:
    """Base class: a named node of the net with sources, parameters, forward and backward."""

    type_name: ClassVar[str] = ""
    is_input: ClassVar[bool] = False
    is_loss: ClassVar[bool] = False
    nsrc: ClassVar[tuple[int, int]] = (1, 1)  # allowed number of source layers (min, max)

    def __init__(self, proto: job_pb2.LayerProto) -> None:
        self.proto = proto
        self.name = proto.name
        self.params: list[Param] = []
        self.out_shape: Shape = ()
        self.loss: float | None = None
        self.accuracy: float | None = None
        self.labels: np.ndarray | None = None

    def setup(self, src_shapes: list[Shape], make_param: MakeParam) -> Shape:
        self.out_shape = src_shapes[0]
        return self.out_shape

    def forward(self, inputs: list[np.ndarray], train: bool, labels: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def backward(self, grad: np.ndarray | None) -> list[np.ndarray | None]:
        raise NotImplementedError


class InputLayer(Layer):
    """kCSVInput / kRecordInput: outputs the batch the worker feeds it, and holds its labels."""

    is_input = True
    nsrc = (0, 0)

    def __init__(self, proto: job_pb2.LayerProto) -> None:
        super().__init__(proto)
        self._batch: np.ndarray | None = None

    def setup(self, src_shapes: list[Shape], make_param: MakeParam) -> Shape:
        self.out_shape = tuple(int(d) for d in self.proto.store_conf.shape)
        return self.out_shape

    def feed(self, features: np.ndarray, labels: np.ndarray | None) -> None:
        self._batch = features
        self.labels = labels

    def forward(self, inputs, train, labels=None):
        if self._batch is None:
            raise RuntimeError(f"input layer {self.name} was not fed a batch")
        return self._batch

    def backward(self, grad):
        return []


class InnerProductLayer(Layer):
    type_name = "kInnerProduct"

    def setup(self, src_shapes, make_param):
        conf = self.proto.innerproduct_conf
        self.vdim = math.prod(src_shapes[0])
        self.hdim = conf.num_output
        self.transpose = conf.transpose
        wshape = (self.vdim, self.hdim) if self.transpose else (self.hdim, self.vdim)
        self.weight = make_param(0, "weight", wshape, InitSpec("kUniformSqrtFanInOut"))
        self.params = [self.weight]
        self.bias = None
        if conf.bias_term:
            self.bias = make_param(1, "bias", (self.hdim,), InitSpec("kConstant", value=0.0))
            self.params.append(self.bias)
        self.out_shape = (self.hdim,)
        return self.out_shape

    def forward(self, inputs, train, labels=None):
        x = inputs[0]
        self._in_shape = x.shape
        self._x = x.reshape(x.shape[0], -1)
        w = self.weight.value
        y = self._x @ (w if self.transpose else w.T)
        if self.bias is not None:
            y = y + self.bias.value
        return y

    def backward(self, grad):
        w = self.weight.value
        if self.transpose:
            self.weight.grad += self._x.T @ grad
            dx = grad @ w.T
        else:
            self.weight.grad += grad.T @ self._x
            dx = grad @ w
        if self.bias is not None:
            self.bias.grad += grad.sum(axis=0)
        return [dx.reshape(self._in_shape)]


class STanhLayer(Layer):
    type_name = "kSTanh"

    def forward(self, inputs, train, labels=None):
        self._t = np.tanh(STANH_B * inputs[0])
        return STANH_A * self._t

    def backward(self, grad):
        return [grad * (STANH_A * STANH_B) * (1.0 - self._t * self._t)]


class ReLULayer(Layer):
    type_name = "kReLU"

    def forward(self, inputs, train, labels=None):
        x = inputs[0]
        self._pos = x > 0
        slope = self.proto.relu_conf.negative_slope
        return np.where(self._pos, x, slope * x)

    def backward(self, grad):
        slope = self.proto.relu_conf.negative_slope
        return [np.where(self._pos, grad, slope * grad)]


class SigmoidLayer(Layer):
    type_name = "kSigmoid"

    def forward(self, inputs, train, labels=None):
        self._y = 1.0 / (1.0 + np.exp(-inputs[0]))
        return self._y

    def backward(self, grad):
        return [grad * self._y * (1.0 - self._y)]


class DropoutLayer(Layer):
    type_name = "kDropout"

    def __init__(self, proto):
        super().__init__(proto)
        self.rng = np.random.default_rng(0)
        self._mask: np.ndarray | None = None

    def forward(self, inputs, train, labels=None):
        x = inputs[0]
        ratio = self.proto.dropout_conf.dropout_ratio
        if not train or ratio <= 0:
            self._mask = None
            return x
        keep = 1.0 - ratio
        self._mask = (self.rng.random(x.shape) < keep).astype(x.dtype) / x.dtype.type(keep)
        return x * self._mask

    def backward(self, grad):
        return [grad if self._mask is None else grad * self._mask]


def softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def topk_accuracy(scores: np.ndarray, labels: np.ndarray, k: int) -> float:
    if scores.shape[0] == 0:
        return 0.0
    k = max(1, min(k, scores.shape[1]))
    if k == 1:
        return float(np.mean(scores.argmax(axis=1) == labels))
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    return float(np.mean((top == labels[:, None]).any(axis=1)))


class SoftmaxLayer(Layer):
    type_name = "kSoftmax"

    def forward(self, inputs, train, labels=None):
        self._y = softmax(inputs[0].reshape(inputs[0].shape[0], -1))
        return self._y

    def backward(self, grad):
        g = grad.reshape(self._y.shape)
        return [self._y * (g - (g * self._y).sum(axis=1, keepdims=True))]


class SoftmaxLossLayer(Layer):
    type_name = "kSoftmaxLoss"
    is_loss = True
    nsrc = (2, 2)

    def setup(self, src_shapes, make_param):
        self.out_shape = (1,)
        return self.out_shape

    def forward(self, inputs, train, labels=None):
        logits = inputs[0].reshape(inputs[0].shape[0], -1)
        self._p = softmax(logits)
        self._labels = labels
        n = logits.shape[0]
        scale = self.proto.softmaxloss_conf.scale
        picked = self._p[np.arange(n), labels]
        self.loss = float(-np.mean(np.log(np.maximum(picked, 1e-20))) * scale)
        self.accuracy = topk_accuracy(self._p, labels, self.proto.softmaxloss_conf.topk)
        self._in_shape = inputs[0].shape
        return np.asarray([self.loss])

    def backward(self, grad):
        n = self._p.shape[0]
        g = self._p.copy()
        g[np.arange(n), self._labels] -= 1.0
        g *= self.proto.softmaxloss_conf.scale / n
        return [g.reshape(self._in_shape), None]


class EuclideanLossLayer(Layer):
    type_name = "kEuclideanLoss"
    is_loss = True
    nsrc = (2, 2)

    def setup(self, src_shapes, make_param):
        if math.prod(src_shapes[0]) != math.prod(src_shapes[1]):
            raise ValueError(f"its sources have different sizes {src_shapes[0]} and {src_shapes[1]}")
        self.out_shape = (1,)
        return self.out_shape

    def forward(self, inputs, train, labels=None):
        a, b = inputs[0], inputs[1].reshape(inputs[0].shape)
        self._diff = a - b
        n = a.shape[0]
        self.loss = float(0.5 * np.sum(self._diff * self._diff) / n)
        return np.asarray([self.loss])

    def backward(self, grad):
        return [self._diff / self._diff.shape[0], None]


class AccuracyLayer(Layer):
    type_name = "kAccuracy"
    nsrc = (2, 2)

    def setup(self, src_shapes, make_param):
        self.out_shape = (1,)
        return self.out_shape

    def forward(self, inputs, train, labels=None):
        scores = inputs[0].reshape(inputs[0].shape[0], -1)
        self.accuracy = topk_accuracy(scores, labels, self.proto.argsort_conf.topk)
        return np.asarray([self.accuracy])

    def backward(self, grad):
        return [None, None]


INPUT_TYPES = ("kCSVInput", "kRecordInput")
LAYERS: dict[str, type[Layer]] = {cls.type_name: cls for cls in (
    InnerProductLayer, STanhLayer, ReLULayer, SigmoidLayer, DropoutLayer, SoftmaxLayer, SoftmaxLossLayer,
    EuclideanLossLayer, AccuracyLayer)}
LAYERS.update({name: InputLayer for name in INPUT_TYPES})
# Layers whose second source must be an input layer carrying labels.
LABELLED = ("kSoftmaxLoss", "kAccuracy")


def create_layer(proto: job_pb2.LayerProto) -> Layer:
    """The layer object for `proto`. KeyError when the type is not implemented (checked earlier)."""
    return LAYERS[job_pb2.LayerType.Name(proto.type)](proto)
