"""The training benchmark's baseline trains the network it claims to: right gradients, it learns, one JSON line.

Benchmark 6 reports our framework's samples/s as a ratio of this plain-numpy
run; a wrong backward pass or a loop that does less than SINGA's worker
would make that ratio meaningless without anything failing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench import numpy_mlp


def _params(rng: np.random.Generator, inputs: int = 8, hidden: int = 5, classes: int = 3) -> dict[str, np.ndarray]:
    # float64, and biases not zero, so that finite differences are exact enough and every term is exercised
    return {"w1": rng.normal(0, 0.5, (hidden, inputs)), "b1": rng.normal(0, 0.1, hidden),
            "w2": rng.normal(0, 0.5, (classes, hidden)), "b2": rng.normal(0, 0.1, classes)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_backward_pass_matches_finite_differences_of_the_loss(seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = _params(rng)
    xb = rng.normal(0, 1, (7, 8))
    yb = rng.integers(0, 3, 7)
    grads = numpy_mlp.gradients(params, xb, yb)
    eps = 1e-6
    for name, w in params.items():
        numeric = np.zeros_like(w)
        for i in np.ndindex(w.shape):
            saved = w[i]
            w[i] = saved + eps
            up = numpy_mlp.loss(params, xb, yb)
            w[i] = saved - eps
            down = numpy_mlp.loss(params, xb, yb)
            w[i] = saved
            numeric[i] = (up - down) / (2 * eps)
        assert grads[name].shape == w.shape, name
        np.testing.assert_allclose(grads[name], numeric, rtol=1e-5, atol=1e-8, err_msg=name)


def _clusters(rng: np.random.Generator, n: int, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, len(centres), n)
    return (centres[labels] + rng.normal(0, 1.0, (n, centres.shape[1]))).astype(np.float32), labels


def test_training_learns_ten_separable_classes_and_reports_each_display_window() -> None:
    rng = np.random.default_rng(7)
    centres = rng.normal(0, 3.0, (10, 64))
    x, y = _clusters(rng, 2000, centres)
    xt, yt = _clusters(rng, 500, centres)
    untrained = numpy_mlp.train(x, y, steps=0)[0]
    params, rates = numpy_mlp.train(x, y, steps=300, disp=100)
    assert numpy_mlp.accuracy(untrained, xt, yt) < 0.5
    assert numpy_mlp.accuracy(params, xt, yt) > 0.95
    assert len(rates) == 3 and all(r > 0 for r in rates)


def test_main_reads_the_digits_csv_layout_and_prints_one_json_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 16, (10, 64))
    for name, n in (("train.csv", 640), ("test.csv", 200)):
        x, y = _clusters(rng, n, centres)
        # the layout `scylla-singa data digits` writes: label first, then 64 pixels in 0..16
        rows = np.column_stack([y, np.clip(np.rint(x), 0, 16)]).astype(int)
        np.savetxt(tmp_path / name, rows, fmt="%d", delimiter=",")
    assert numpy_mlp.main(["--data", str(tmp_path), "--steps", "200", "--disp", "50"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1
    report = json.loads(lines[0])
    assert len(report["samples_per_s"]) == 4
    assert report["test_accuracy"] > 0.9
    assert report["wall_s"] > 0
