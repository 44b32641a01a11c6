"""Learning-rate schedules and updaters, as pure functions.

Learning rate at step t (DESIGN.md section 3; integer division where SINGA
v0 divided ints):

    kFixed        base_lr
    kStep         base_lr * gamma ^ (t // change_freq)
    kFixedStep    step_lr[i] for the largest i with t >= step[i]; base_lr before step[0]
    kLinear       (1 - r) * base_lr + r * final_lr,  r = min(t / change_freq, 1)
    kExponential  base_lr / 2 ^ (t / change_freq)
    kInverse      base_lr * (1 + gamma * t) ^ (-pow)
    kInverseT     base_lr / (1 + t / final_lr)

(kLinear holds final_lr after change_freq steps instead of going past it.)

An updater is `update(cfg, value, grad, state, step, lr) -> (value, state)`:
it never mutates its arguments. `lr` is the schedule's rate times the
parameter's lr_scale (a scalar or a per-element vector), `cfg.weight_decay`
is multiplied by the wd_scale passed with it. Every updater first clips the
gradient to [clip_low, clip_high] when clip_high > clip_low, then adds
weight decay (g += wd * w). Then, as in SINGA v0 (h, u: per-element state):

    kSGD       momentum > 0: h = momentum*h - lr*g; w += h     else w -= lr*g
    kNesterov  h' = momentum*h + lr*g; w -= (1+momentum)*h' - momentum*h
    kAdaGrad   h += g^2; w -= lr*g / sqrt(h + delta)
    kRMSProp   h = rho*h + (1-rho)*g^2; w -= lr*g / sqrt(h + delta)
    kAdaDelta  h = rho*h + (1-rho)*g^2; d = g*sqrt(u + delta)/sqrt(h + delta);
               u = rho*u + (1-rho)*d^2; w -= lr*d
    kAdam      m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
               w -= lr * (m/(1-b1^k)) / (sqrt(v/(1-b2^k)) + delta),  k = t+1
    kAdamMax   m = b1*m + (1-b1)*g; v = max(b2*v, |g|); w -= lr/(1-b1^k) * m / (v + delta)

(kAdam and kAdamMax use Kingma and Ba's bias correction, which SINGA v0.3 left out.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scylla_singa.jobconf import job_pb2

LRSchedule = Callable[[int], float]
State = dict[str, np.ndarray]

SUPPORTED_LR = ("kFixed", "kStep", "kFixedStep", "kLinear", "kExponential", "kInverse", "kInverseT")
SUPPORTED_UPDATERS = ("kSGD", "kNesterov", "kAdaGrad", "kRMSProp", "kAdaDelta", "kAdam", "kAdamMax")


def learning_rate(lr: job_pb2.LRGenProto) -> LRSchedule:
    """The schedule of `lr`. Raises ValueError for an unsupported type or a zero change_freq."""
    kind = job_pb2.ChangeMethod.Name(lr.type)
    base = lr.base_lr
    if kind == "kFixed":
        return lambda t: base
    if kind == "kStep":
        freq, gamma = _freq(lr.step_conf.change_freq, "step_conf"), lr.step_conf.gamma
        return lambda t: base * gamma ** (t // freq)
    if kind == "kFixedStep":
        steps, rates = list(lr.fixedstep_conf.step), list(lr.fixedstep_conf.step_lr)
        if len(steps) != len(rates):
            raise ValueError(f"fixedstep_conf has {len(steps)} step and {len(rates)} step_lr values; "
                             "they must pair up")
        return lambda t: next((r for s, r in sorted(zip(steps, rates), reverse=True) if t >= s), base)
    if kind == "kLinear":
        freq, final = _freq(lr.linear_conf.change_freq, "linear_conf"), lr.linear_conf.final_lr
        return lambda t: (1 - min(t / freq, 1.0)) * base + min(t / freq, 1.0) * final
    if kind == "kExponential":
        freq = _freq(lr.exponential_conf.change_freq, "exponential_conf")
        return lambda t: base / 2 ** (t / freq)
    if kind == "kInverse":
        gamma, power = lr.inverse_conf.gamma, lr.inverse_conf.pow
        return lambda t: base * (1 + gamma * t) ** (-power)
    if kind == "kInverseT":
        final = lr.inverset_conf.final_lr
        if final == 0:
            raise ValueError("inverset_conf.final_lr must not be 0")
        return lambda t: base / (1 + t / final)
    raise ValueError(f"learning_rate type {kind} is not supported (supported: {', '.join(SUPPORTED_LR)})")


def _freq(value: int, conf: str) -> int:
    if value <= 0:
        raise ValueError(f"{conf}.change_freq must be a positive number of steps, got {value}")
    return value


@dataclass(frozen=True)
class UpdaterConfig:
    """UpdaterProto reduced to what the update rules read."""

    type: str = "kSGD"
    momentum: float = 0.0
    weight_decay: float = 0.0
    delta: float = 1e-8
    clip_low: float = 0.0
    clip_high: float = 0.0
    rho: float = 0.9
    beta1: float = 0.9
    beta2: float = 0.999

    @classmethod
    def from_proto(cls, u: job_pb2.UpdaterProto) -> "UpdaterConfig":
        kind = job_pb2.UpdaterType.Name(u.type)
        if kind not in SUPPORTED_UPDATERS:
            raise ValueError(f"updater type {kind} is not supported (supported: {', '.join(SUPPORTED_UPDATERS)})")
        rho = u.adadelta_conf.rho if kind == "kAdaDelta" else u.rmsprop_conf.rho
        betas = u.adammax_conf if kind == "kAdamMax" else u.adam_conf
        return cls(kind, u.momentum, u.weight_decay, u.delta, u.clip_low, u.clip_high, rho, betas.beta1,
                   betas.beta2)


def init_state(cfg: UpdaterConfig, size: int, dtype=np.float32) -> State:
    """Zeroed per-element state for `size` values."""
    names = {"kSGD": ("history",) if cfg.momentum > 0 else (), "kNesterov": ("history",),
             "kAdaGrad": ("history",), "kRMSProp": ("history",), "kAdaDelta": ("history", "update"),
             "kAdam": ("history", "update"), "kAdamMax": ("history", "update")}[cfg.type]
    return {n: np.zeros(size, dtype=dtype) for n in names}


def update(cfg: UpdaterConfig, value: np.ndarray, grad: np.ndarray, state: State, step: int,
           lr: float | np.ndarray, wd_scale: float | np.ndarray = 1.0) -> tuple[np.ndarray, State]:
    """One update of `value` by `grad` at `step`. Pure: returns new arrays."""
    g = grad
    if cfg.clip_high > cfg.clip_low:
        g = np.clip(g, cfg.clip_low, cfg.clip_high)
    if cfg.weight_decay > 0:
        g = g + (cfg.weight_decay * wd_scale) * value
    return _RULES[cfg.type](cfg, value, g, state, step, lr)


def _sgd(cfg, w, g, st, step, lr):
    if cfg.momentum > 0:
        h = cfg.momentum * st["history"] - lr * g
        return w + h, {"history": h}
    return w - lr * g, {}


def _nesterov(cfg, w, g, st, step, lr):
    h_old = st["history"]
    h = cfg.momentum * h_old + lr * g
    return w - ((1 + cfg.momentum) * h - cfg.momentum * h_old), {"history": h}


def _adagrad(cfg, w, g, st, step, lr):
    h = st["history"] + g * g
    return w - lr * g / np.sqrt(h + cfg.delta), {"history": h}


def _rmsprop(cfg, w, g, st, step, lr):
    h = cfg.rho * st["history"] + (1 - cfg.rho) * g * g
    return w - lr * g / np.sqrt(h + cfg.delta), {"history": h}


def _adadelta(cfg, w, g, st, step, lr):
    h = cfg.rho * st["history"] + (1 - cfg.rho) * g * g
    d = g * np.sqrt(st["update"] + cfg.delta) / np.sqrt(h + cfg.delta)
    u = cfg.rho * st["update"] + (1 - cfg.rho) * d * d
    return w - lr * d, {"history": h, "update": u}


def _adam(cfg, w, g, st, step, lr):
    k = step + 1
    m = cfg.beta1 * st["history"] + (1 - cfg.beta1) * g
    v = cfg.beta2 * st["update"] + (1 - cfg.beta2) * g * g
    mhat = m / (1 - cfg.beta1 ** k)
    vhat = v / (1 - cfg.beta2 ** k)
    return w - lr * mhat / (np.sqrt(vhat) + cfg.delta), {"history": m, "update": v}


def _adammax(cfg, w, g, st, step, lr):
    k = step + 1
    m = cfg.beta1 * st["history"] + (1 - cfg.beta1) * g
    v = np.maximum(cfg.beta2 * st["update"], np.abs(g))
    return w - (lr / (1 - cfg.beta1 ** k)) * m / (v + cfg.delta), {"history": m, "update": v}


_RULES = {"kSGD": _sgd, "kNesterov": _nesterov, "kAdaGrad": _adagrad, "kRMSProp": _rmsprop,
          "kAdaDelta": _adadelta, "kAdam": _adam, "kAdamMax": _adammax}

assert set(_RULES) == set(SUPPORTED_UPDATERS)
