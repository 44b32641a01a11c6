"""Parameters: their initialisation (ParamProto.init) and their layout in one flat vector.

Every worker keeps all parameter values in one float32 vector, and every
parameter's value and gradient are views into it. Servers own contiguous
slices of that vector (`slice_bounds`), so pushing a gradient slice or
pulling a value slice is one array copy, and per-parameter learning-rate and
weight-decay scales become per-element vectors over a slice.

Initialisation follows SINGA v0's Param::InitValues (fan-in is the number of
columns of a 2-D parameter; SINGA stores an inner-product weight as
(num_output, fan_in)):

    kConstant             value
    kUniform              U(low, high) * value
    kGaussian             N(mean, std) * value
    kUniformSqrtFanIn     U(low, high) * value / sqrt(fan_in / 3)
    kGaussianSqrtFanIn    N(mean, std) * value / sqrt(fan_in)
    kUniformSqrtFanInOut  U(low, high) * value / sqrt(fan_in + fan_out)

For a 1-D parameter fan_in is its length and fan_out is 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scylla_singa.jobconf import job_pb2

INIT = job_pb2.InitMethod
SUPPORTED_INITS = ("kConstant", "kUniform", "kGaussian", "kUniformSqrtFanIn", "kGaussianSqrtFanIn",
                   "kUniformSqrtFanInOut")


@dataclass(frozen=True)
class InitSpec:
    """ParamGenProto reduced to plain values."""

    type: str = "kConstant"
    value: float = 1.0
    mean: float = 0.0
    std: float = 1.0
    low: float = -1.0
    high: float = 1.0

    @classmethod
    def from_proto(cls, gen: job_pb2.ParamGenProto) -> "InitSpec":
        return cls(type=INIT.Name(gen.type), value=gen.value, mean=gen.mean, std=gen.std, low=gen.low,
                   high=gen.high)


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of the model: its name, shape, initialisation and update scales."""

    name: str
    shape: tuple[int, ...]
    init: InitSpec
    lr_scale: float = 1.0
    wd_scale: float = 1.0

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) >= 2:
        return int(math.prod(shape[1:])), int(shape[0])
    return int(shape[0]) if shape else 1, 0


def init_values(spec: ParamSpec, rng: np.random.Generator) -> np.ndarray:
    """Initial values of `spec` (float32, its shape). Raises ValueError for an unknown init type."""
    g, shape = spec.init, spec.shape
    fan_in, fan_out = _fans(shape)
    if g.type == "kConstant":
        out = np.full(shape, g.value, dtype=np.float64)
    elif g.type == "kUniform":
        out = rng.uniform(g.low, g.high, shape) * g.value
    elif g.type == "kGaussian":
        out = rng.normal(g.mean, g.std, shape) * g.value
    elif g.type == "kUniformSqrtFanIn":
        out = rng.uniform(g.low, g.high, shape) * g.value / math.sqrt(fan_in / 3.0)
    elif g.type == "kGaussianSqrtFanIn":
        out = rng.normal(g.mean, g.std, shape) * g.value / math.sqrt(fan_in)
    elif g.type == "kUniformSqrtFanInOut":
        out = rng.uniform(g.low, g.high, shape) * g.value / math.sqrt(fan_in + fan_out)
    else:
        raise ValueError(f"param {spec.name}: init type {g.type} is not supported (supported: "
                         f"{', '.join(SUPPORTED_INITS)})")
    return out.astype(np.float32)


class Param:
    """A parameter's value and gradient arrays (views into flat buffers once bound)."""

    def __init__(self, spec: ParamSpec, dtype=np.float32) -> None:
        self.spec = spec
        self.value = np.zeros(spec.shape, dtype=dtype)
        self.grad = np.zeros(spec.shape, dtype=dtype)

    @property
    def name(self) -> str:
        return self.spec.name

    def __repr__(self) -> str:
        return f"Param({self.spec.name}, {self.spec.shape})"


@dataclass(frozen=True)
class ParamLayout:
    """Where each parameter lives in the flat vector; the same on every worker and server."""

    specs: tuple[ParamSpec, ...]
    offsets: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.offsets:
            offs, at = [], 0
            for s in self.specs:
                offs.append(at)
                at += s.size
            object.__setattr__(self, "offsets", tuple(offs))

    @property
    def total(self) -> int:
        return (self.offsets[-1] + self.specs[-1].size) if self.specs else 0

    def bind(self, params: dict[str, Param], values: np.ndarray, grads: np.ndarray) -> None:
        """Make every parameter's value and grad a view into `values` and `grads`."""
        for spec, off in zip(self.specs, self.offsets):
            p = params[spec.name]
            values[off:off + spec.size] = p.value.reshape(-1)
            p.value = values[off:off + spec.size].reshape(spec.shape)
            p.grad = grads[off:off + spec.size].reshape(spec.shape)

    def initial_values(self, seed: int) -> np.ndarray:
        """The whole flat vector initialised from every spec, reproducibly from `seed`."""
        rng = np.random.default_rng(seed)
        out = np.empty(self.total, dtype=np.float32)
        for spec, off in zip(self.specs, self.offsets):
            out[off:off + spec.size] = init_values(spec, rng).reshape(-1)
        return out

    def scales(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-element lr_scale and wd_scale vectors over the flat vector."""
        lr = np.empty(self.total, dtype=np.float32)
        wd = np.empty(self.total, dtype=np.float32)
        for spec, off in zip(self.specs, self.offsets):
            lr[off:off + spec.size] = spec.lr_scale
            wd[off:off + spec.size] = spec.wd_scale
        return lr, wd

    def signature(self) -> list[list]:
        """Names and shapes, for checking that a checkpoint belongs to this model."""
        return [[s.name, list(s.shape)] for s in self.specs]


def slice_bounds(total: int, nslices: int) -> list[tuple[int, int]]:
    """Split [0, total) into `nslices` contiguous, near-equal, disjoint ranges (server s owns the s-th)."""
    return [(s * total // nslices, (s + 1) * total // nslices) for s in range(nslices)]
