"""progress_report: what a PROGRESS report may hold; every refusal says which field and why."""

from __future__ import annotations

import json
import math

import pytest

from scylla_singa.framework.progress_report import (MAX_INT, MAX_KEYS, MAX_STRING, BadProgress, decode_progress,
                                                    parse_progress)

GOOD = {"job": "j", "proc": 0, "group": 0, "worker": 1, "step": 50, "loss": 0.5, "accuracy": 0.9,
        "samples_per_s": 100.0, "phase": "train", "task": "j.proc-0.a1"}


@pytest.mark.parametrize("report", [
    pytest.param(GOOD, id="python-runtime"),
    pytest.param({**GOOD, "metrics": {"loss": 0.5, "accuracy": 0.9}, "phase": "validate"}, id="real-singa-metrics"),
    pytest.param({"job": "j", "step": 0, "loss": None, "accuracy": None, "samples_per_s": None}, id="nulls"),
    pytest.param({"job": "j", "step": MAX_INT, "extra": "x" * MAX_STRING, "flag": True, "n": -3}, id="at-bounds"),
])
def test_a_well_formed_report_is_taken_as_it_is(report) -> None:
    assert parse_progress(report) == report


def test_a_diverging_loss_is_kept_as_no_value() -> None:
    p = decode_progress(b'{"job": "j", "step": 5, "loss": NaN, "accuracy": Infinity, "metrics": {"loss": NaN}}')
    assert (p["loss"], p["accuracy"], p["metrics"]) == (None, None, {"loss": None}) and p["step"] == 5


@pytest.mark.parametrize("report, reason", [
    pytest.param({**GOOD, "task": "t" * (MAX_STRING + 1)}, "'task' has 257 characters, at most 256", id="long-task"),
    pytest.param({**GOOD, "job": "j" * 1000}, "'job' has 1000 characters", id="long-job"),
    pytest.param({**GOOD, "note": "x" * 900_000}, "'note' has 900000 characters", id="900k-field"),
    pytest.param({**GOOD, **{f"k{i}": 1 for i in range(MAX_KEYS)}}, f"at most {MAX_KEYS} are taken", id="many-keys"),
    pytest.param({**GOOD, "x" * 65: 1}, "name is longer than 64", id="long-key"),
    pytest.param({**GOOD, "step": -1}, "step must be between 0", id="negative-step"),
    pytest.param({**GOOD, "step": 2 ** 70}, "step must be between 0", id="huge-step"),
    pytest.param({**GOOD, "step": 1.5}, "step must be an integer", id="float-step"),
    pytest.param({**GOOD, "step": True}, "step must be an integer", id="bool-step"),
    pytest.param({**GOOD, "proc": "0"}, "proc must be an integer", id="string-proc"),
    pytest.param({**GOOD, "loss": "0.1"}, "loss must be a number or null", id="string-loss"),
    pytest.param({**GOOD, "loss": 10 ** 400}, "too large", id="loss-overflows"),
    pytest.param({**GOOD, "phase": "x"}, "'phase' must be one of train, test, validate", id="bad-phase"),
    pytest.param({**GOOD, "job": 5}, "'job' must be a string", id="number-job"),
    pytest.param({**GOOD, "job": ""}, "'job' must name a job", id="empty-job"),
    pytest.param({**GOOD, "extra": {"a": 1}}, "only 'metrics' is an object", id="nested-extra"),
    pytest.param({**GOOD, "extra": [1, 2]}, "only 'metrics' is an object", id="list-extra"),
    pytest.param({**GOOD, "extra": 2 ** 60}, "'extra' must be between", id="huge-extra-int"),
    pytest.param({**GOOD, "metrics": [1]}, "'metrics' must be an object", id="metrics-list"),
    pytest.param({**GOOD, "metrics": {"a": "b"}}, "metrics.a must be a number", id="metrics-string"),
    pytest.param({**GOOD, "metrics": {f"m{i}": 1 for i in range(MAX_KEYS + 1)}}, "'metrics' has 33 names",
                 id="metrics-many"),
    pytest.param([], "JSON object", id="not-object"),
    pytest.param({"step": 1}, "needs 'job'", id="no-job"),
])
def test_a_report_out_of_bounds_is_refused_with_its_reason(report, reason) -> None:
    with pytest.raises(BadProgress, match=reason.replace("(", r"\(")):
        parse_progress(report)


@pytest.mark.parametrize("body, reason", [
    pytest.param(b"[" * 60_000 + b"]" * 60_000, "nested too deeply", id="deep-nesting"),
    pytest.param(b'{"job": "j", "step": ' + b"9" * 5000 + b"}", "not JSON", id="5000-digit-int"),
    pytest.param(b"\xff\xfe", "not UTF-8", id="not-utf8"),
    pytest.param(b"{", "not JSON", id="truncated"),
    pytest.param(json.dumps({"job": "j", "step": 1, "extra": math.inf}).encode(), "finite", id="infinite-extra"),
])
def test_a_body_that_is_no_report_is_refused_with_its_reason(body, reason) -> None:
    with pytest.raises(BadProgress, match=reason):
        decode_progress(body)
