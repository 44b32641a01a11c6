"""SINGA 0.3.0's own log lines (recorded from real runs in logs/) read as events."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.singa_task import glog
from scylla_singa.singa_task.glog import SingaCheckpointWritten, Fatal, LogReader, SingaMetrics, SingaRegistered

LOGS = Path(__file__).parent / "logs"


def events_of(name: str) -> list[glog.Event]:
    reader = LogReader()
    out: list[glog.Event] = []
    for line in (LOGS / name).read_text().splitlines(keepends=True):
        out.extend(reader.feed(line))
    return out + reader.flush()


def test_single_process_run_gives_every_display_test_and_checkpoint() -> None:
    events = events_of("digits-mlp-local.log")
    train = [e for e in events if isinstance(e, SingaMetrics) and e.phase == "train"]
    tests = [e for e in events if isinstance(e, SingaMetrics) and e.phase == "test"]
    assert [m.step for m in train] == list(range(0, 600, 50))
    assert train[1].values == {"loss": 1.27508, "accuracy": 0.73875}
    assert [(m.step, m.values["accuracy"]) for m in tests] == [(0, 0.125), (200, 0.972222), (400, 0.969444)]
    assert [e.step for e in events if isinstance(e, SingaCheckpointWritten)] == [0, 200, 400, 600]
    assert [e for e in events if isinstance(e, SingaRegistered)] == [SingaRegistered(0, "localhost:0")]
    assert not [e for e in events if isinstance(e, Fatal)]


def test_test_metrics_come_as_their_lines_come() -> None:
    reader = LogReader()
    assert reader.feed("E20261203 09:57:10.370204    10 worker.cc:98] Test @ step 200\n") == []
    (event,) = reader.feed("E20261203 09:57:10.371927    10 worker.cc:361]    Loss = 0.125789, accuracy = 0.972222\n")
    assert event == SingaMetrics("test", 200, {"loss": 0.125789, "accuracy": 0.972222}, event.t)


def test_an_rbm_test_reports_through_its_warnings() -> None:
    events = events_of("rbm1-test.log")
    tests = [(m.step, m.values) for m in events if isinstance(m, SingaMetrics) and m.phase == "test"]
    assert tests == [(0, {"squared_error": 117.112053}), (500, {"squared_error": 2.486391})]
    assert [m.step for m in events if isinstance(m, SingaMetrics) and m.phase == "train"] == [0, 100, 200, 300, 400]


def test_distributed_process_reports_its_registration() -> None:
    events = events_of("hogwild-proc1.log")
    assert [e for e in events if isinstance(e, SingaRegistered)] == [SingaRegistered(1, "172.21.0.4:49152")]
    assert not [e for e in events if isinstance(e, SingaMetrics)]  # only group 0's worker displays


def test_process_zero_of_hogwild_displays_group_zero() -> None:
    events = events_of("hogwild-proc0.log")
    assert [e for e in events if isinstance(e, SingaRegistered)] == [SingaRegistered(0, "172.21.0.5:49152")]
    assert [m.step for m in events if isinstance(m, SingaMetrics) and m.phase == "test"] == [0, 200, 400]


@pytest.mark.parametrize("name, parse_error", [
    ("bad-enum.log", ("JobProto", 80, 5, 'Unknown enumeration value of "kNoSuchLayer" for field "type".')),
    ("bad-field.log", ("JobProto", 61, 18, 'Message type "singa.InnerProductProto" has no field named "num_outputs".')),
    ("bad-syntax.log", ("JobProto", 6, 18, "Expected identifier, got: {")),
])
def test_a_conf_parse_error_is_carried_by_the_fatal_line(name: str, parse_error: tuple) -> None:
    fatals = [e for e in events_of(name) if isinstance(e, Fatal)]
    assert fatals == [Fatal("common.cc", "Check failed: google::protobuf::TextFormat::Parse(input, proto) ", parse_error)]


def test_other_fatals_have_no_parse_error() -> None:
    (fatal,) = [e for e in events_of("bad-datapath.log") if isinstance(e, Fatal)]
    assert fatal == Fatal("textfile_store.cc", "error in reading csv file", None)


@pytest.mark.parametrize("text, values", [
    ("Loss = 0.1, accuracy = 0.9", {"loss": 0.1, "accuracy": 0.9}),
    ("Squared Error = 12.5", {"squared_error": 12.5}),
    ("loss = 5.2, ppl = 181.3", {"loss": 5.2, "perplexity": 181.3}),
    ("Loss = -nan, accuracy = 0.1", {"accuracy": 0.1}),
    ("no metrics here", {}),
])
def test_metric_names(text: str, values: dict) -> None:
    parsed = glog.parse_metrics(text)
    assert {k: v for k, v in parsed.items() if v == v} == values  # NaN dropped by the comparison
