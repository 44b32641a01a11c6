"""Updaters against hand computations, learning-rate schedules, and parameter initialisation."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from google.protobuf import text_format
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.jobconf import job_pb2
from scylla_singa.runtime.params import InitSpec, ParamSpec, init_values, slice_bounds
from scylla_singa.runtime.updaters import UpdaterConfig, init_state, learning_rate, update

W = [1.0, -2.0]
G = [0.5, 0.25]


@dataclass
class UCase:
    id: str
    cfg: UpdaterConfig
    state: dict
    want_w: list
    want_state: dict = field(default_factory=dict)
    step: int = 0
    lr: object = 0.1
    wd_scale: object = 1.0


# Each expected value below was worked out by hand from the rule in updaters.py's docstring.
SQ = math.sqrt
CASES = [
    UCase("sgd", UpdaterConfig("kSGD"), {}, [0.95, -2.025]),
    # g' = g + 0.1 w = [0.6, 0.05]; h' = 0.9 h - 0.1 g' = [0.03, -0.005]; w' = w + h'
    UCase("sgd-momentum-decay", UpdaterConfig("kSGD", momentum=0.9, weight_decay=0.1),
          {"history": [0.1, 0.0]}, [1.03, -2.005], {"history": [0.03, -0.005]}),
    # g clipped to [0.3, 0.25]
    UCase("sgd-clip", UpdaterConfig("kSGD", clip_low=-0.3, clip_high=0.3), {}, [0.97, -2.025]),
    # per-element lr [0.1, 0.2] and wd_scale [1, 0]: g' = [0.6, 0.25]; w' = [1 - 0.06, -2 - 0.05]
    UCase("sgd-scales", UpdaterConfig("kSGD", weight_decay=0.1), {}, [0.94, -2.05],
          lr=np.array([0.1, 0.2]), wd_scale=np.array([1.0, 0.0])),
    # h' = 0.9 h + 0.1 g = [0.14, 0.025]; w' = w - (1.9 h' - 0.9 h) = w - [0.176, 0.0475]
    UCase("nesterov", UpdaterConfig("kNesterov", momentum=0.9), {"history": [0.1, 0.0]}, [0.824, -2.0475],
          {"history": [0.14, 0.025]}),
    # h' = h + g^2 = [0.25, 0.8125]; w' = w - 0.1 g / sqrt(h' + 0.01)
    UCase("adagrad", UpdaterConfig("kAdaGrad", delta=0.01), {"history": [0.0, 0.75]},
          [1 - 0.05 / SQ(0.26), -2 - 0.025 / SQ(0.8225)], {"history": [0.25, 0.8125]}),
    # h' = 0.9 h + 0.1 g^2 = [0.025, 0.68125]; w' = w - 0.1 g / sqrt(h' + 0.01)
    UCase("rmsprop", UpdaterConfig("kRMSProp", delta=0.01, rho=0.9), {"history": [0.0, 0.75]},
          [1 - 0.05 / SQ(0.035), -2 - 0.025 / SQ(0.69125)], {"history": [0.025, 0.68125]}),
    # h' = [0.025, 0.00625]; d = g sqrt(u + 0.01) / sqrt(h' + 0.01); u' = 0.9 u + 0.1 d^2; w' = w - 0.1 d
    UCase("adadelta", UpdaterConfig("kAdaDelta", delta=0.01, rho=0.9), {"history": [0.0, 0.0], "update": [0.04, 0.0]},
          [1 - 0.1 * 0.5 * SQ(0.05) / SQ(0.035), -2 - 0.1 * 0.25 * SQ(0.01) / SQ(0.01625)],
          {"history": [0.025, 0.00625],
           "update": [0.036 + 0.1 * (0.5 * SQ(0.05) / SQ(0.035)) ** 2, 0.1 * (0.25 * SQ(0.01) / SQ(0.01625)) ** 2]}),
    # first step: m = 0.1 g, v = 0.001 g^2, bias-corrected m/(1-0.9) = g, v/(1-0.999) = g^2: w' = w - 0.1 sign(g)
    UCase("adam-first-step", UpdaterConfig("kAdam", delta=0.0), {"history": [0.0, 0.0], "update": [0.0, 0.0]},
          [0.9, -2.1], {"history": [0.05, 0.025], "update": [0.00025, 0.0000625]}),
    # second step with the same g: m = 0.19 g, v = 0.001999 g^2 -> corrected m = g, v = g^2 again
    UCase("adam-second-step", UpdaterConfig("kAdam", delta=0.0), {"history": [0.05, 0.025],
          "update": [0.00025, 0.0000625]}, [0.9, -2.1], step=1),
    # m = 0.1 g, v = |g|: w' = w - (0.1 / 0.1) * 0.1 g / |g|
    UCase("adammax", UpdaterConfig("kAdamMax", delta=0.0), {"history": [0.0, 0.0], "update": [0.0, 0.0]},
          [0.9, -2.1], {"history": [0.05, 0.025], "update": [0.5, 0.25]}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_update_matches_hand_computation(case: UCase) -> None:
    w, g = np.array(W), np.array(G)
    state = {k: np.array(v) for k, v in case.state.items()}
    before = (w.copy(), g.copy(), {k: v.copy() for k, v in state.items()})
    new_w, new_state = update(case.cfg, w, g, state, case.step, case.lr, case.wd_scale)
    np.testing.assert_allclose(new_w, case.want_w, rtol=1e-9, atol=1e-12)
    for k, v in case.want_state.items():
        np.testing.assert_allclose(new_state[k], v, rtol=1e-9, atol=1e-12, err_msg=k)
    np.testing.assert_array_equal(w, before[0])  # pure: the inputs are untouched
    np.testing.assert_array_equal(g, before[1])
    for k, v in before[2].items():
        np.testing.assert_array_equal(state[k], v)


@pytest.mark.parametrize("kind,names", [("kSGD", ()), ("kNesterov", ("history",)), ("kAdam", ("history", "update"))],
                         ids=["sgd", "nesterov", "adam"])
def test_init_state_has_what_the_rule_reads(kind, names) -> None:
    assert tuple(sorted(init_state(UpdaterConfig(kind), 3))) == names


def test_updater_config_reads_the_proto_and_refuses_user_updaters() -> None:
    u = job_pb2.UpdaterProto()
    text_format.Parse("type: kRMSProp momentum: 0.5 rmsprop_conf { rho: 0.8 }", u)
    cfg = UpdaterConfig.from_proto(u)
    assert (cfg.type, cfg.rho) == ("kRMSProp", pytest.approx(0.8))
    with pytest.raises(ValueError, match="kUserUpdater is not supported"):
        UpdaterConfig.from_proto(job_pb2.UpdaterProto())


LR = [
    ("fixed", "type: kFixed base_lr: 0.1", [(0, 0.1), (5000, 0.1)]),
    ("step", "type: kStep base_lr: 0.1 step_conf { change_freq: 100 gamma: 0.5 }",
     [(0, 0.1), (99, 0.1), (100, 0.05), (250, 0.025)]),
    ("fixedstep", "type: kFixedStep fixedstep_conf { step: 0 step: 100 step: 200 step_lr: 1 step_lr: 0.1 step_lr: 0.01 }",
     [(0, 1.0), (150, 0.1), (200, 0.01), (10000, 0.01)]),
    ("fixedstep-before-first", "type: kFixedStep base_lr: 0.2 fixedstep_conf { step: 100 step_lr: 0.5 }",
     [(50, 0.2), (100, 0.5)]),
    ("linear", "type: kLinear base_lr: 1 linear_conf { change_freq: 100 final_lr: 0 }",
     [(0, 1.0), (25, 0.75), (100, 0.0), (200, 0.0)]),
    ("exponential", "type: kExponential base_lr: 1 exponential_conf { change_freq: 100 }",
     [(0, 1.0), (50, 1 / math.sqrt(2)), (100, 0.5)]),
    ("inverse", "type: kInverse base_lr: 1 inverse_conf { gamma: 0.1 pow: 0.5 }", [(0, 1.0), (30, 0.5)]),
    ("inverset", "type: kInverseT base_lr: 1 inverset_conf { final_lr: 10 }", [(0, 1.0), (10, 0.5)]),
]


@pytest.mark.parametrize("text,points", [(t, p) for _, t, p in LR], ids=[i for i, _, _ in LR])
def test_learning_rate_schedules(text: str, points) -> None:
    proto = job_pb2.LRGenProto()
    text_format.Parse(text, proto)
    schedule = learning_rate(proto)
    for step, want in points:
        assert schedule(step) == pytest.approx(want, rel=1e-6), step


@pytest.mark.parametrize("text,msg", [
    ("type: kUserChange", "kUserChange is not supported"),
    ("type: kStep step_conf { gamma: 0.5 }", "change_freq must be a positive"),
    ("type: kFixedStep fixedstep_conf { step: 1 step: 2 step_lr: 0.1 }", "must pair up"),
], ids=["user-change", "no-change-freq", "unpaired-fixedstep"])
def test_unusable_learning_rates_are_refused(text: str, msg: str) -> None:
    proto = job_pb2.LRGenProto()
    text_format.Parse(text, proto)
    with pytest.raises(ValueError, match=msg):
        learning_rate(proto)


INITS = [
    ("constant", InitSpec("kConstant", value=0.5), lambda v: np.all(v == 0.5)),
    ("uniform", InitSpec("kUniform", low=-2, high=3, value=2),
     lambda v: v.min() >= -4 and v.max() <= 6 and abs(v.mean() - 1) < 0.05),
    ("gaussian", InitSpec("kGaussian", mean=1, std=2), lambda v: abs(v.mean() - 1) < 0.05 and abs(v.std() - 2) < 0.05),
    # fan_in = 300 columns: bound 1 / sqrt(300 / 3) = 0.1
    ("uniform-sqrt-fan-in", InitSpec("kUniformSqrtFanIn"),
     lambda v: np.abs(v).max() <= 0.1 + 1e-6 and abs(v.std() - 0.1 / math.sqrt(3)) < 0.002),
    ("gaussian-sqrt-fan-in", InitSpec("kGaussianSqrtFanIn"), lambda v: abs(v.std() - 1 / math.sqrt(300)) < 0.001),
    # bound 1 / sqrt(200 + 300)
    ("uniform-sqrt-fan-in-out", InitSpec("kUniformSqrtFanInOut"),
     lambda v: np.abs(v).max() <= 1 / math.sqrt(500) + 1e-6 and np.abs(v).max() > 0.9 / math.sqrt(500)),
]


@pytest.mark.parametrize("init,check", [(i, c) for _, i, c in INITS], ids=[n for n, _, _ in INITS])
def test_every_init_type(init: InitSpec, check) -> None:
    values = init_values(ParamSpec("w", (200, 300), init), np.random.default_rng(0))
    assert values.shape == (200, 300) and values.dtype == np.float32
    assert check(values)


def test_user_init_is_refused() -> None:
    with pytest.raises(ValueError, match="kUserInit is not supported"):
        init_values(ParamSpec("w", (2, 2), InitSpec("kUserInit")), np.random.default_rng(0))


@settings(max_examples=60, deadline=None)
@given(total=st.integers(1, 5000), n=st.integers(1, 16))
def test_slices_are_disjoint_contiguous_and_cover_everything(total: int, n: int) -> None:
    if n > total:
        n = total
    bounds = slice_bounds(total, n)
    assert bounds[0][0] == 0 and bounds[-1][1] == total
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [hi - lo for lo, hi in bounds]
    assert max(sizes) - min(sizes) <= 1
