"""Our .proto files and codec against bytes a real Apache Mesos 1.12 wrote (no Mesos needed).

The fixtures (tests/fixtures/apache_mesos_protobuf/, see its README) hold a
real master's and agent's answers in protobuf and JSON. Each protobuf answer
must parse with our messages leaving no field unknown (bar one Mesos leftover,
below), serialize back to the same bytes, and turn into exactly the JSON
Mesos wrote for the same call once our dict form adds Mesos's defaults.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.proto import agent_pb2, master_pb2, scheduler_pb2
from tests.apache_mesos.real_mesos import (AGENT_INFO_LEFTOVER, mesos_json_without_quirks, unknown_fields,
                                            without_live_values)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "apache_mesos_protobuf"
PAIRS = sorted(p.stem for p in FIXTURES.glob("*.pb") if p.with_suffix(".json").exists())
EVENTS = sorted(p.stem for p in FIXTURES.glob("scheduler-*.pb"))

def parse(stem: str) -> Any:
    cls = (scheduler_pb2.Event if stem.startswith("scheduler-") else
           master_pb2.Response if stem.startswith("master-") else agent_pb2.Response)
    message = cls()
    message.ParseFromString((FIXTURES / f"{stem}.pb").read_bytes())
    return message


def test_fixtures_are_present() -> None:
    assert len(PAIRS) >= 25 and len(EVENTS) >= 6, f"fixtures missing in {FIXTURES}"


@pytest.mark.parametrize("stem", PAIRS + EVENTS)
def test_real_mesos_bytes_leave_no_field_unknown(stem: str) -> None:
    unknown = [path for path in unknown_fields(parse(stem)) if not path.endswith(AGENT_INFO_LEFTOVER)]
    assert unknown == []


@pytest.mark.parametrize("stem", PAIRS + EVENTS)
def test_real_mesos_bytes_serialize_back_unchanged(stem: str) -> None:
    message = parse(stem)
    raw = (FIXTURES / f"{stem}.pb").read_bytes()
    if any(p.endswith(AGENT_INFO_LEFTOVER) for p in unknown_fields(message)):
        # Unknown fields go after the known ones on re-serialization: compare the messages instead.
        again = type(message)()
        again.ParseFromString(message.SerializeToString())
        assert again == message
    else:
        assert message.SerializeToString() == raw


@pytest.mark.parametrize("stem", PAIRS)
def test_our_dict_form_of_the_protobuf_answer_is_mesos_json_answer(stem: str) -> None:
    ours = codec.to_dict(parse(stem), defaults=True)
    theirs = mesos_json_without_quirks(json.loads((FIXTURES / f"{stem}.json").read_text()))
    assert without_live_values(ours) == without_live_values(theirs)


@pytest.mark.parametrize("stem", EVENTS)
def test_real_events_encode_back_to_the_same_bytes_from_the_dict_form(stem: str) -> None:
    raw = (FIXTURES / f"{stem}.pb").read_bytes()
    event = codec.to_dict(parse(stem))
    assert codec.encode_event(codec.SCHEDULER, event, codec.MediaType.PROTOBUF) == raw


def test_offers_of_a_multi_role_framework_carry_allocation_info() -> None:
    offers = codec.to_dict(parse("scheduler-OFFERS"))["offers"]["offers"]
    assert offers and all(r["allocation_info"] == {"role": "compat"} for r in offers[0]["resources"])


def test_subscribed_names_the_master_as_mesos_does() -> None:
    info = codec.to_dict(parse("scheduler-SUBSCRIBED"))["subscribed"]
    assert info["heartbeat_interval_seconds"] == 15.0
    master = info["master_info"]
    assert master["ip"] == 16777343  # 127.0.0.1 as a little-endian uint32, not 0
    assert master["pid"] == f"master@127.0.0.1:{master['port']}" and master["version"] == "1.12.0"


def test_updates_carry_uuid_bytes_and_container_status() -> None:
    status = parse("scheduler-UPDATE-TASK_RUNNING").update.status
    assert len(status.uuid) == 16 and status.container_status.executor_pid > 0
    assert codec.to_dict(status)["source"] == "SOURCE_EXECUTOR"
