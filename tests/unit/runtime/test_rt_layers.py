"""Every layer's backward against central finite differences of its forward (float64)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from google.protobuf import text_format

from scylla_singa.jobconf import job_pb2, parse_job_text
from scylla_singa.runtime.layers import InputLayer, STANH_A, STANH_B, create_layer, topk_accuracy
from scylla_singa.runtime.net import build_model
from scylla_singa.runtime.params import InitSpec, Param, ParamSpec

EPS = 1e-6


def layer_from(text: str):
    proto = job_pb2.LayerProto()
    text_format.Parse(text, proto)
    return create_layer(proto)


def setup(layer, src_shapes, rng):
    def make(i, role, shape, default):
        p = Param(ParamSpec(f"{layer.name}_{role}", tuple(shape), InitSpec()), dtype=np.float64)
        p.value[...] = rng.normal(0, 0.5, shape)
        return p
    layer.setup(src_shapes, make)
    return layer


def numeric_grad(f, x: np.ndarray) -> np.ndarray:
    g = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        old = x[i]
        x[i] = old + EPS
        hi = f()
        x[i] = old - EPS
        lo = f()
        x[i] = old
        g[i] = (hi - lo) / (2 * EPS)
    return g


@dataclass
class Case:
    id: str
    conf: str
    shapes: list = field(default_factory=lambda: [(4,)])
    batch: int = 3
    away_from_zero: bool = False
    loss: bool = False


CASES = [
    Case("inner-product", 'name: "fc" type: kInnerProduct innerproduct_conf { num_output: 3 }', [(5,)]),
    Case("inner-product-transpose", 'name: "fc" type: kInnerProduct innerproduct_conf { num_output: 3 transpose: true }',
         [(5,)]),
    Case("inner-product-no-bias", 'name: "fc" type: kInnerProduct innerproduct_conf { num_output: 2 bias_term: false }',
         [(2, 3)]),
    Case("stanh", 'name: "t" type: kSTanh'),
    Case("relu", 'name: "r" type: kReLU', away_from_zero=True),
    Case("relu-leaky", 'name: "r" type: kReLU relu_conf { negative_slope: 0.1 }', away_from_zero=True),
    Case("sigmoid", 'name: "s" type: kSigmoid'),
    Case("dropout", 'name: "d" type: kDropout dropout_conf { dropout_ratio: 0.4 }', [(6,)]),
    Case("softmax", 'name: "sm" type: kSoftmax', [(5,)]),
    Case("softmax-loss", 'name: "loss" type: kSoftmaxLoss', [(5,), (1,)], batch=4, loss=True),
    Case("softmax-loss-scaled", 'name: "loss" type: kSoftmaxLoss softmaxloss_conf { scale: 2.5 topk: 2 }',
         [(5,), (1,)], batch=4, loss=True),
    Case("euclidean-loss", 'name: "loss" type: kEuclideanLoss', [(4,), (4,)], loss=True),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_backward_matches_finite_differences(case: Case) -> None:
    rng = np.random.default_rng(7)
    layer = setup(layer_from(case.conf), case.shapes, rng)
    x = rng.normal(0, 1, (case.batch,) + case.shapes[0])
    if case.away_from_zero:
        x = np.where(np.abs(x) < 0.1, 0.5, x)
    others = [rng.normal(0, 1, (case.batch,) + s) for s in case.shapes[1:]]
    labels = rng.integers(0, 5, case.batch)
    proj = None

    def forward():
        if case.id == "dropout":
            layer.rng = np.random.default_rng(3)  # the same mask on every evaluation
        out = layer.forward([x] + others, True, labels)
        return layer.loss if case.loss else float(np.sum(out * proj))

    if not case.loss:
        proj = rng.normal(0, 1, layer.forward([x] + others, True, labels).shape)
    forward()
    for p in layer.params:
        p.grad[...] = 0
    grads = layer.backward(None if case.loss else proj)
    np.testing.assert_allclose(grads[0], numeric_grad(forward, x), rtol=1e-5, atol=1e-7)
    for p in layer.params:
        np.testing.assert_allclose(p.grad, numeric_grad(forward, p.value), rtol=1e-5, atol=1e-7,
                                   err_msg=f"param {p.name}")


def test_stanh_is_singas_scaled_tanh() -> None:
    layer = setup(layer_from('name: "t" type: kSTanh'), [(3,)], np.random.default_rng(0))
    x = np.array([[-1.0, 0.0, 2.0]])
    np.testing.assert_allclose(layer.forward([x], True), STANH_A * np.tanh(STANH_B * x))


def test_dropout_scales_kept_units_in_training_and_is_identity_in_test() -> None:
    layer = setup(layer_from('name: "d" type: kDropout dropout_conf { dropout_ratio: 0.25 }'), [(1000,)],
                  np.random.default_rng(0))
    x = np.ones((4, 1000))
    out = layer.forward([x], True)
    assert set(np.unique(out)) <= {0.0, 1 / 0.75}
    assert abs((out == 0).mean() - 0.25) < 0.03
    np.testing.assert_array_equal(layer.forward([x], False), x)


@pytest.mark.parametrize("k,expected", [(1, 0.25), (2, 0.75), (3, 1.0)], ids=["top1", "top2", "top3"])
def test_topk_accuracy(k: int, expected: float) -> None:
    scores = np.array([[0.9, 0.1, 0.0], [0.3, 0.6, 0.1], [0.5, 0.4, 0.1], [0.2, 0.1, 0.7]])
    labels = np.array([0, 0, 1, 1])
    assert topk_accuracy(scores, labels, k) == pytest.approx(expected)


def test_accuracy_layer_reports_topk_and_passes_no_gradient() -> None:
    layer = setup(layer_from('name: "acc" type: kAccuracy argsort_conf { topk: 1 }'), [(3,), (1,)],
                  np.random.default_rng(0))
    scores = np.array([[0.9, 0.1, 0.0], [0.1, 0.8, 0.1]])
    layer.forward([scores, np.zeros((2, 1))], False, np.array([0, 2]))
    assert layer.accuracy == 0.5
    assert layer.backward(np.ones(1)) == [None, None]


NET = """
name: "n" train_steps: 1
train_one_batch { alg: kBP }
updater { type: kSGD learning_rate { type: kFixed base_lr: 0.1 } }
neuralnet {
  layer { name: "data" type: kCSVInput store_conf { path: "x.csv" batchsize: 4 shape: 5 } }
  layer { name: "fc1" type: kInnerProduct srclayers: "data" innerproduct_conf { num_output: 5 }
          param { name: "w1" init { type: kGaussian std: 0.5 } } param { name: "b1" init { type: kUniform } } }
  layer { name: "act" type: kSigmoid srclayers: "fc1" }
  layer { name: "fc2" type: kInnerProduct srclayers: "act" innerproduct_conf { num_output: 5 }
          param { name: "w2" share_from: "w1" } param { name: "b2" init { type: kConstant value: 0.1 } } }
  layer { name: "relu" type: kSTanh srclayers: "fc2" }
  layer { name: "fc3" type: kInnerProduct srclayers: "relu" innerproduct_conf { num_output: 3 } }
  layer { name: "loss" type: kSoftmaxLoss srclayers: "fc3" srclayers: "data" }
}
"""


def test_whole_net_gradient_with_a_shared_parameter() -> None:
    model = build_model(parse_job_text(NET), dtype=np.float64)
    assert [s.name for s in model.layout.specs] == ["w1", "b1", "b2", "fc3_weight", "fc3_bias"]
    model.values[:] = model.layout.initial_values(1)
    net = model.nets["train"]
    rng = np.random.default_rng(2)
    inp = next(layer for layer in net.layers if isinstance(layer, InputLayer))
    inp.feed(rng.normal(0, 1, (4, 5)), np.array([0, 1, 2, 1]))

    def loss():
        return net.forward(train=True).loss

    loss()
    model.grads.fill(0)
    net.backward()
    np.testing.assert_allclose(model.grads, numeric_grad(loss, model.values), rtol=1e-5, atol=1e-8)
