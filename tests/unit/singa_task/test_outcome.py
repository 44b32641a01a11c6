"""Exit codes from real SINGA endings: a conf error (exit 2) told from a crash (exit 1) by the log."""

from __future__ import annotations

import pytest

from scylla_singa.singa_task import outcome
from scylla_singa.singa_task.glog import Fatal, LogReader

from .test_glog import events_of


def fatal_of(name: str) -> Fatal | None:
    return next((e for e in events_of(name) if isinstance(e, Fatal)), None)


@pytest.mark.parametrize("log, code, reason", [
    ("bad-enum.log", 2, './job.conf:80:5: Unknown enumeration value of "kNoSuchLayer" for field "type".'),
    ("bad-field.log", 2, './job.conf:61:18: Message type "singa.InnerProductProto" has no field named "num_outputs".'),
    ("bad-syntax.log", 2, "./job.conf:6:18: Expected identifier, got: {"),
    ("bad-datapath.log", 2, "./job.conf: a CSV input file (store_conf.path) cannot be read"),
    ("bad-share-from.log", 2, './job.conf: share_from "w1" names no parameter: SINGA 0.3.0 renames every '
     'parameter to 0#<name> when it unrolls the net, but not share_from; write share_from: "0#w1"'),
])
def test_recorded_conf_errors_exit_2_with_the_place(log: str, code: int, reason: str) -> None:
    result = outcome.decide(134, fatal_of(log), "./job.conf")
    assert (result.code, result.reason) == (code, reason)


def test_a_crash_without_a_fatal_line_exits_1() -> None:
    # kLRN on a flat input: SINGA dies of SIGFPE (exit 136) without logging why.
    assert fatal_of("bad-unregistered.log") is None
    result = outcome.decide(136, None, "job.conf")
    assert (result.code, result.reason) == (1, "SINGA died with signal 8 (exit 136)")


@pytest.mark.parametrize("message, code", [
    ("Check failed: procs_id_ < nprocs() (4 vs. 3) ", 1),
    ("File not found: /w/rbm1/checkpoint/step6000-worker0", 2),
    ("Cannot create file /data/mnist/train_data.bin", 2),
    ("Check failed: fin.is_open() Can't open vocab_path = examples/char-rnn/vocab.txt", 2),
    ("The creation function for 53 has not been registered", 2),
    ("workspace not exist: /nope", 2),
    ("Check failed: name2param.find(from) != name2param.end() can't find share_from = w1", 2),
])
def test_fatal_messages(message: str, code: int) -> None:
    assert outcome.decide(134, Fatal("x.cc", message), "job.conf").code == code


def test_lost_peers_win_over_the_exit_status() -> None:
    result = outcome.decide(-15, None, "job.conf", (1, 2))
    assert (result.code, result.reason) == (3, "lost peer processes 1, 2")
    assert outcome.decide(0, None, "job.conf").code == 0
    assert outcome.decide(-9, None, "job.conf").reason == "SINGA was killed by signal 9"


def test_a_singa_conf_error_names_singa_conf() -> None:
    reader = LogReader()
    reader.feed("[libprotobuf ERROR google/protobuf/text_format.cc:337] Error parsing text-format "
                "singa.SingaProto: 1:15: Expected string.\n")
    (fatal,) = reader.feed("F20261203 09:58:48.668015     9 common.cc:506] Check failed: parse\n")
    assert outcome.decide(134, fatal, "job.conf").reason == "singa.conf:1:15: Expected string."


def test_the_share_from_message_says_what_to_write() -> None:
    fatal = Fatal("neuralnet.cc", "Check failed: name2param.find(from) != name2param.end() can't find share_from = w1")
    assert outcome.decide(134, fatal, "rbm1.conf").reason.endswith('write share_from: "0#w1"')
