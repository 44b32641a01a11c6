"""PROGRESS and FINAL payloads from a recorded real SINGA run."""

from __future__ import annotations

import pytest

from scylla_singa.singa_task.glog import SingaMetrics
from scylla_singa.singa_task.report import Reporter

from .test_glog import events_of


def test_progress_and_final_of_the_digits_run() -> None:
    reporter = Reporter("digits", 0, batchsize=64)
    reports = [reporter.progress(e) for e in events_of("digits-mlp-local.log") if isinstance(e, SingaMetrics)]
    assert {r["phase"] for r in reports} == {"train", "test"}
    assert all(r["group"] == 0 and r["worker"] == 0 and r["proc"] == 0 and r["job"] == "digits" for r in reports)
    train = [r for r in reports if r["phase"] == "train"]
    # steps 0 -> 50 displayed at 09:57:09.713692 and 09:57:09.866417: 50 * 64 samples in 0.152725 s
    assert train[1]["step"] == 50 and train[1]["samples_per_s"] == pytest.approx(50 * 64 / 0.152725, rel=1e-4)
    assert train[0]["samples_per_s"] is None
    final = reporter.final(600, 4.2)
    assert final == {"job": "digits", "steps": 600, "test_loss": 0.112126, "test_accuracy": 0.969444,
                     "test_step": 400, "wall_s": 4.2}


def test_a_second_display_of_a_step_merges() -> None:
    reporter = Reporter("j", 2, batchsize=None)
    reporter.progress(SingaMetrics("train", 10, {"loss": 1.0}, 1.0))
    merged = reporter.progress(SingaMetrics("train", 10, {"accuracy": 0.5}, 1.0))
    assert (merged["loss"], merged["accuracy"], merged["proc"]) == (1.0, 0.5, 2)


def test_rbm_squared_error_is_reported_as_loss() -> None:
    reporter = Reporter("rbm", 0, batchsize=100)
    r = reporter.progress(SingaMetrics("test", 500, {"squared_error": 7.5}, 0.0))
    assert (r["loss"], r["accuracy"], r["metrics"]) == (7.5, None, {"squared_error": 7.5})
    assert reporter.final(6000, 1.0)["test_loss"] == 7.5


def test_final_without_any_test() -> None:
    assert Reporter("j", 0, 1).final(10, 0.5) == {"job": "j", "steps": 10, "test_loss": None,
                                                  "test_accuracy": None, "test_step": None, "wall_s": 0.5}


def test_a_second_test_line_of_the_same_step_merges() -> None:
    reporter = Reporter("j", 0, batchsize=None)
    reporter.progress(SingaMetrics("test", 300, {"loss": 0.2}, 1.0))
    merged = reporter.progress(SingaMetrics("test", 300, {"accuracy": 0.9}, 1.1))
    assert (merged["loss"], merged["accuracy"]) == (0.2, 0.9)
    assert reporter.final(600, 1.0)["test_accuracy"] == 0.9
    reporter.progress(SingaMetrics("validate", 300, {"perplexity": 3.0}, 1.2))
    assert reporter.final(600, 1.0)["test_step"] == 300   # validation is not the test
