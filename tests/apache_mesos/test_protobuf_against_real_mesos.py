"""Our .proto files and codec against a live Apache Mesos 1.12 master and agent.

Every request body is encoded by our messages and every answer decoded by
them: the scheduler API (SUBSCRIBE, ACCEPT/LAUNCH, ACKNOWLEDGE, RECONCILE,
TEARDOWN, events SUBSCRIBED/HEARTBEAT/OFFERS/UPDATE), the master's and the
agent's operator API (read-only calls, SUBSCRIBE and its events), and Mesos's
refusals of bad bodies, which our codec must give with the same status and
text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import AGENT_OPERATOR, MASTER_OPERATOR, SCHEDULER, CodecError, MediaType
from scylla_singa.mesos.api.proto import master_pb2, mesos_pb2

from . import flows
from .real_mesos import (AGENT_INFO_LEFTOVER, EventStream, MesosProcess, mesos_json_without_quirks, operator_call,
                         post, unknown_fields, without_live_values)

BOTH = [MediaType.PROTOBUF, MediaType.JSON]


def no_unknown(message: Any) -> list[str]:
    return [p for p in unknown_fields(message) if not p.endswith(AGENT_INFO_LEFTOVER)]


def test_subscribe_in_protobuf_streams_subscribed_then_heartbeat(real_master: MesosProcess) -> None:
    stream = flows.subscribe(real_master.address, MediaType.PROTOBUF, name="probe")
    try:
        assert stream.status == 200 and stream.headers["Content-Type"] == MediaType.PROTOBUF
        assert stream.stream_id
        subscribed, _ = stream.next_of("SUBSCRIBED", 10)
        assert no_unknown(subscribed) == []
        assert subscribed.subscribed.framework_id.value
        assert subscribed.subscribed.heartbeat_interval_seconds == 15.0
        assert subscribed.subscribed.master_info.port == real_master.port
        heartbeat, raw = stream.next_of("HEARTBEAT", 10)
        assert raw == b"\x08\x08"
        status, _ = flows.scheduler_call(real_master.address, stream, {
            "type": "TEARDOWN", "framework_id": {"value": subscribed.subscribed.framework_id.value}},
            MediaType.PROTOBUF)
        assert status == 202
    finally:
        stream.close()


@pytest.mark.parametrize("kind", flows.READ_ONLY_MASTER_CALLS)
def test_master_operator_call_in_protobuf_decodes_completely(real_master: MesosProcess, kind: str) -> None:
    response, _ = operator_call(real_master.address, MASTER_OPERATOR, flows.operator_body(MASTER_OPERATOR, kind),
                                MediaType.PROTOBUF)
    assert master_pb2.Response.Type.Name(response.type) == kind
    assert response.HasField(kind.lower()) and no_unknown(response) == []


def test_master_answers_carry_what_clients_read(real_master: MesosProcess, real_agent: MesosProcess) -> None:
    pb = MediaType.PROTOBUF
    version, _ = operator_call(real_master.address, MASTER_OPERATOR, {"type": "GET_VERSION"}, pb)
    assert version.get_version.version_info.version == "1.12.0"
    flags, _ = operator_call(real_master.address, MASTER_OPERATOR, {"type": "GET_FLAGS"}, pb)
    assert {f.name: f.value for f in flags.get_flags.flags}["port"] == str(real_master.port)
    state, _ = operator_call(real_master.address, MASTER_OPERATOR, {"type": "GET_STATE"}, pb)
    agents = state.get_state.get_agents.agents
    assert [a.agent_info.port for a in agents] == [real_agent.port]
    assert {r.name for r in agents[0].total_resources} >= {"cpus", "mem", "disk", "ports"}


@pytest.mark.parametrize("kind", [k for k in flows.READ_ONLY_MASTER_CALLS])
def test_master_protobuf_and_json_answers_are_the_same_dict(real_master: MesosProcess, kind: str) -> None:
    pb, js = flows.both_formats(real_master.address, MASTER_OPERATOR, kind)
    response = master_pb2.Response()
    response.ParseFromString(pb)
    ours = without_live_values(codec.to_dict(response, defaults=True))
    assert ours == without_live_values(mesos_json_without_quirks(json.loads(js)))


@pytest.mark.parametrize("kind", ["GET_HEALTH", "GET_FLAGS", "GET_VERSION", "GET_STATE", "GET_CONTAINERS",
                                  "GET_FRAMEWORKS", "GET_EXECUTORS", "GET_TASKS", "GET_AGENT"])
def test_agent_operator_call_in_protobuf_decodes_completely(real_agent: MesosProcess, kind: str) -> None:
    pb, js = flows.both_formats(real_agent.address, AGENT_OPERATOR, kind)
    response = AGENT_OPERATOR.response()
    response.ParseFromString(pb)
    assert no_unknown(response) == []
    ours = without_live_values(codec.to_dict(response, defaults=True))
    assert ours == without_live_values(mesos_json_without_quirks(json.loads(js)))


@pytest.mark.parametrize("media_type", BOTH, ids=["protobuf", "json"])
def test_a_command_task_runs_to_finished_with_every_call_encoded_by_us(
        real_master: MesosProcess, real_agent: MesosProcess, media_type: MediaType) -> None:
    run = flows.run_command_task(real_master.address, media_type)
    assert {kind: status for kind, (status, _) in run.answers.items()} == {
        "ACCEPT": 202, "ACKNOWLEDGE TASK_STARTING": 202, "ACKNOWLEDGE TASK_RUNNING": 202,
        "ACKNOWLEDGE TASK_FINISHED": 202, "RECONCILE": 202, "TEARDOWN": 202}
    assert [k for k in run.records if k.startswith("UPDATE TASK")] == [
        "UPDATE TASK_STARTING", "UPDATE TASK_RUNNING", "UPDATE TASK_FINISHED"]
    offers = codec.to_dict(decode_event(run.records["OFFERS"][0], media_type))["offers"]["offers"]
    assert all(r["allocation_info"] == {"role": "compat"} for r in offers[0]["resources"])


def decode_event(record: bytes, media_type: MediaType) -> Any:
    event = SCHEDULER.event()
    if media_type is MediaType.PROTOBUF:
        event.ParseFromString(record)
        assert no_unknown(event) == []
    else:
        codec.from_dict(event, json.loads(record), strict=True)
    return event


def test_operator_subscribe_in_protobuf_reports_frameworks_and_tasks(
        real_master: MesosProcess, real_agent: MesosProcess) -> None:
    stream = EventStream(real_master.address, "/api/v1", MASTER_OPERATOR, {"type": "SUBSCRIBE"}, MediaType.PROTOBUF)
    try:
        assert stream.status == 200
        subscribed, _ = stream.next_of("SUBSCRIBED", 10)
        assert subscribed.subscribed.heartbeat_interval_seconds > 0
        assert [a.agent_info.port for a in subscribed.subscribed.get_state.get_agents.agents] == [real_agent.port]
        run = flows.run_command_task(real_master.address, MediaType.PROTOBUF)
        added, _ = stream.next_of("FRAMEWORK_ADDED", 30)
        assert added.framework_added.framework.framework_info.id.value == run.framework_id
        task_added, _ = stream.next_of("TASK_ADDED", 30)
        assert task_added.task_added.task.framework_id.value == run.framework_id
        states = []
        while "TASK_FINISHED" not in states:
            updated, _ = stream.next_of("TASK_UPDATED", 30)
            assert no_unknown(updated) == []
            states.append(mesos_pb2.TaskState.Name(updated.task_updated.state))
        assert states == ["TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"]
    finally:
        stream.close()


BAD_BODIES = [
    ("no-content-type", None, None, b"{}"),
    ("text-plain", "text/plain", None, b"{}"),
    ("json-charset", "application/json; charset=utf-8", None, b"{}"),
    ("not-json", "application/json", None, b"nope"),
    ("array", "application/json", None, b"[1]"),
    ("missing-required", "application/json", None,
     b'{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u"}}}'),
    ("number-for-enum", "application/json", None, b'{"type":5}'),
    ("number-for-repeated", "application/json", None,
     b'{"type":"DECLINE","framework_id":{"value":"x"},"decline":{"offer_ids":5}}'),
    ("bad-number-string", "application/json", None,
     b'{"type":"DECLINE","framework_id":{"value":"x"},"decline":{"offer_ids":[],"filters":{"refuse_seconds":"abc"}}}'),
    ("string-for-message", "application/json", None, b'{"type":"DECLINE","framework_id":"x"}'),
    ("bad-base64", "application/json", None,
     b'{"type":"MESSAGE","framework_id":{"value":"x"},"message":{"agent_id":{"value":"a"},'
     b'"executor_id":{"value":"e"},"data":"!!"}}'),
    ("accept-html", "application/json", "text/html", b'{"type":"SUBSCRIBE","subscribe":{"framework_info":'
                                                     b'{"user":"u","name":"n"}}}'),
    ("corrupt-protobuf", "application/x-protobuf", None, b"\xff\xff\xff"),
    ("protobuf-missing-required", "application/x-protobuf", None, b"\x10\x01\x1a\x02\x0a\x00"),
]


@pytest.mark.parametrize("content_type, accept, body", [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES])
def test_our_codec_refuses_bad_bodies_as_mesos_does(real_master: MesosProcess, content_type: str | None,
                                                    accept: str | None, body: bytes) -> None:
    headers = {k: v for k, v in (("Content-Type", content_type), ("Accept", accept)) if v is not None}
    status, _, text = post(real_master.address, flows.SCHEDULER_PATH, body, headers)
    try:
        media_type = codec.request_media_type(content_type)
        call = codec.decode_call(SCHEDULER, body, media_type)
        if call.get("type") == "SUBSCRIBE":
            codec.response_media_type(accept)
        raise AssertionError(f"our codec accepted what Mesos answered {status}: {text!r}")
    except CodecError as err:
        ours = (err.status, err.message)
    mesos = (status, text.decode())
    if mesos[1].startswith("Failed to parse body into JSON: ") or "as a JSON number" in mesos[1]:
        # The text after this point is Mesos's JSON parser's own (picojson); ours names Python's.
        prefix = mesos[1].split(": syntax error")[0].split("JSON: ")[0]
        assert ours[0] == mesos[0] and ours[1].startswith(prefix), (ours, mesos)
    else:
        assert ours == mesos
