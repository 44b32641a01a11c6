"""The digits MLP in plain numpy, one process, no framework: the baseline of the training benchmark.

    python -m bench.numpy_mlp --data DIR --steps N [--batch 64] [--disp 100]  -> one JSON line

The same network and training as examples/digits-mlp/job.conf: 64 inputs
(pixels / 16) -> 64 (inner product) -> SINGA's scaled tanh 1.7159 tanh(2x/3)
-> 10 (inner product) -> softmax cross-entropy; float32 parameters
initialised U(-1, 1) / sqrt(fan_in + fan_out), biases 0; SGD with momentum
0.9, weight decay 1e-4, learning rate 0.05 halved every 200 steps; batches
of 64 taken in order from the training set, wrapping around. Prints the
samples/s of every `disp` steps and the final test accuracy.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

STANH_A, STANH_B = 1.7159047, 0.6666667


def load(path: Path, std: float = 16.0) -> tuple[np.ndarray, np.ndarray]:
    raw = np.loadtxt(path, delimiter=",", dtype=np.float32)
    return raw[:, 1:] / np.float32(std), raw[:, 0].astype(np.int64)


def init(rng: np.random.Generator, fan_out: int, fan_in: int) -> np.ndarray:
    return (rng.uniform(-1, 1, (fan_out, fan_in)) / np.sqrt(fan_in + fan_out)).astype(np.float32)


def forward(params: dict[str, np.ndarray], xb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tanh of the hidden layer, its scaled output, softmax probabilities) of a batch."""
    t = np.tanh(STANH_B * (xb @ params["w1"].T + params["b1"]))
    h = STANH_A * t
    logits = h @ params["w2"].T + params["b2"]
    logits -= logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return t, h, p


def loss(params: dict[str, np.ndarray], xb: np.ndarray, yb: np.ndarray) -> float:
    """Mean softmax cross-entropy of a batch (not computed while training: the timed loop does what SINGA's
    worker does per step, no more)."""
    p = forward(params, xb)[2]
    return float(-np.log(p[np.arange(len(xb)), yb]).mean())


def gradients(params: dict[str, np.ndarray], xb: np.ndarray, yb: np.ndarray) -> dict[str, np.ndarray]:
    """The gradient of `loss` by parameter, by the hand-written backward pass.

    Its own function so that a test can check it against finite differences:
    the baseline is only worth its ratio if it trains the same network
    correctly.
    """
    t, h, p = forward(params, xb)
    g = p
    g[np.arange(len(xb)), yb] -= 1.0
    g /= len(xb)
    da1 = (g @ params["w2"]) * (STANH_A * STANH_B) * (1.0 - t * t)
    return {"w1": da1.T @ xb, "b1": da1.sum(axis=0), "w2": g.T @ h, "b2": g.sum(axis=0)}


def train(x: np.ndarray, y: np.ndarray, steps: int, batch: int = 64, disp: int = 100, seed: int = 0,
          hidden: int = 64, classes: int = 10) -> tuple[dict[str, np.ndarray], list[float]]:
    """Train; (parameters, samples/s of each display window)."""
    rng = np.random.default_rng(seed)
    params = {"w1": init(rng, hidden, x.shape[1]), "b1": np.zeros(hidden, np.float32),
              "w2": init(rng, classes, hidden), "b2": np.zeros(classes, np.float32)}
    history = {k: np.zeros_like(v) for k, v in params.items()}
    momentum, wd, base_lr = np.float32(0.9), np.float32(1e-4), 0.05
    rates, pos, t0 = [], 0, time.perf_counter()
    for step in range(steps):
        if pos + batch > len(x):
            pos = 0
        xb, yb = x[pos:pos + batch], y[pos:pos + batch]
        pos += batch
        grads = gradients(params, xb, yb)
        lr = np.float32(base_lr * 0.5 ** (step // 200))
        for k, w in params.items():
            gk = grads[k] + wd * w
            history[k] = momentum * history[k] - lr * gk
            w += history[k]
        if (step + 1) % disp == 0:
            now = time.perf_counter()
            rates.append(disp * batch / (now - t0))
            t0 = now
    return params, rates


def accuracy(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    return float((forward(params, x)[2].argmax(axis=1) == y).mean())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.numpy_mlp", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="directory with train.csv and test.csv")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--disp", type=int, default=100)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    x, y = load(args.data / "train.csv")
    xt, yt = load(args.data / "test.csv")
    params, rates = train(x, y, args.steps, args.batch, args.disp)
    print(json.dumps({"samples_per_s": rates, "test_accuracy": accuracy(params, xt, yt),
                      "wall_s": time.perf_counter() - started}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
