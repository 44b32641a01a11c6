"""The Mesos v1 codec: media types, calls in either format, events out, Mesos's JSON rules and errors.

The expected error texts are the ones a real Apache Mesos 1.12 master
answered to the same bodies (measured; see docs/mesos-compat-notes.md).
Where Mesos's JSON parser adds its own words after the prefix, only the
prefix is asserted.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from pymesos import MesosSchedulerDriver

from scylla_singa.framework.taskinfo import build_task
from scylla_singa.jobconf.plan import load_plan
from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import (AGENT_OPERATOR, EXECUTOR, MASTER_OPERATOR, SCHEDULER, CodecError,
                                          MediaType)
from scylla_singa.mesos.api.proto import mesos_pb2, scheduler_pb2
from tests.support.mesos_framework import task_info

from tests.unit.framework.builders import ARTIFACTS, REPO, spec

JSON, PROTOBUF = MediaType.JSON, MediaType.PROTOBUF


# ---- media types --------------------------------------------------------------

@pytest.mark.parametrize("content_type, status, message", [
    (None, 400, "Expecting 'Content-Type' to be present"),
    ("text/plain", 415, "Expecting 'Content-Type' of application/json or application/x-protobuf"),
    ("application/json; charset=utf-8", 415,
     "Expecting 'Content-Type' of application/json or application/x-protobuf"),
], ids=["missing", "other", "json-with-parameters"])
def test_request_media_type_is_refused_as_mesos_refuses_it(content_type, status, message) -> None:
    with pytest.raises(CodecError) as err:
        codec.request_media_type(content_type)
    assert (err.value.status, err.value.message) == (status, message)


def test_request_media_type_accepts_the_two_mesos_types() -> None:
    assert codec.request_media_type("application/json") is JSON
    assert codec.request_media_type("application/x-protobuf") is PROTOBUF


@pytest.mark.parametrize("accept, expected", [
    (None, JSON), ("*/*", JSON), ("application/*", JSON), ("application/json", JSON),
    ("application/x-protobuf", PROTOBUF), ("application/json;q=0, application/x-protobuf", PROTOBUF),
    ("application/x-protobuf, application/json", JSON),  # Mesos checks JSON first, whatever the order
    ("text/html, application/x-protobuf;q=0.5", PROTOBUF), ("APPLICATION/JSON", JSON),
], ids=lambda v: str(v))
def test_response_media_type_prefers_json_like_libprocess(accept, expected) -> None:
    assert codec.response_media_type(accept) is expected


@pytest.mark.parametrize("accept", ["text/html", "application/json;q=0", "application/json;q=0.0,text/*"])
def test_response_media_type_refuses_with_406(accept) -> None:
    with pytest.raises(CodecError) as err:
        codec.response_media_type(accept)
    assert err.value.status == 406
    assert err.value.message == "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'"


# ---- golden bytes -------------------------------------------------------------

def test_subscribe_call_has_the_bytes_mesos_numbers_give() -> None:
    """Call.type = 2 (SUBSCRIBE = 1), Call.subscribe = 3, Subscribe.framework_info = 1,
    FrameworkInfo.user = 1 and name = 2: hand-derived from Mesos's field numbers."""
    call = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u", "name": "n"}}}
    assert codec.message_from_dict(SCHEDULER.call, call).SerializeToString() == (
        b"\x10\x01" b"\x1a\x08" b"\x0a\x06" b"\x0a\x01u" b"\x12\x01n")
    assert codec.decode_call(SCHEDULER, b"\x10\x01\x1a\x08\x0a\x06\x0a\x01u\x12\x01n", PROTOBUF) == call


def test_acknowledge_call_carries_the_uuid_as_raw_bytes() -> None:
    """Acknowledge.uuid = 3 is `bytes`: base64 in JSON, the 16 raw bytes on the wire."""
    raw = bytes(range(16))
    call = {"type": "ACKNOWLEDGE", "framework_id": {"value": "f"},
            "acknowledge": {"agent_id": {"value": "a"}, "task_id": {"value": "t"},
                            "uuid": base64.b64encode(raw).decode()}}
    wire = codec.message_from_dict(SCHEDULER.call, call).SerializeToString()
    assert b"\x1a\x10" + raw in wire
    assert codec.decode_call(SCHEDULER, wire, PROTOBUF) == call


def test_heartbeat_event_is_two_bytes() -> None:
    assert codec.encode_event(SCHEDULER, {"type": "HEARTBEAT"}, PROTOBUF) == b"\x08\x08"
    assert codec.encode_event(SCHEDULER, {"type": "HEARTBEAT"}, JSON) == b'{"type":"HEARTBEAT"}'


# ---- what pymesos sends -------------------------------------------------------

class RecordingDriver(MesosSchedulerDriver):
    """pymesos's own driver, connected to nothing: every call body it would POST is kept."""

    def __init__(self) -> None:
        super().__init__(None, {"user": "root", "name": "rec"}, "127.0.0.1:1", failover=True)
        self.framework_id = "fw-1"
        self.stream_id = "stream-1"  # what makes pymesos consider itself connected
        self.sent: list[dict[str, Any]] = []

    def _send(self, body, path="/api/v1/scheduler", method="POST", headers={}):  # noqa: B006 - pymesos's signature
        self.sent.append(json.loads(json.dumps(body)))
        return {}


def framework_task() -> dict[str, Any]:
    """The TaskInfo our framework builds for a SINGA process (Docker on the job's overlay)."""
    plan = load_plan(REPO / "examples/frameworks/downpour.conf")
    return build_task(spec("examples/frameworks/downpour.conf", job_id="dp-1"), plan.procs[1], 0, "agent-7",
                      ARTIFACTS, allocation_info={"role": "*"}, net_bw_mbps=2.5,
                      progress_url="http://h:1/progress")


def pymesos_calls() -> dict[str, dict[str, Any]]:
    """One body per pymesos driver method that talks to the master, as pymesos builds it."""
    d = RecordingDriver()
    offer = {"value": "offer-1"}
    status = {"task_id": {"value": "t1"}, "agent_id": {"value": "a1"}, "state": "TASK_RUNNING",
              "uuid": base64.b64encode(b"0123456789abcdef").decode()}
    d.launchTasks(offer, [framework_task(), task_info("a1", task_id="t2")], filters={"refuse_seconds": 5})
    d.declineOffer([offer], filters={"refuse_seconds": 3600.0})
    d.reviveOffers(["singa"])
    d.suppressOffers()
    d.killTask({"value": "t1"})
    d.acknowledgeStatusUpdate(status)
    d.reconcileTasks([{"task_id": {"value": "t1"}}])
    d.sendFrameworkMessage({"value": "e1"}, {"value": "a1"}, base64.b64encode(b"hello").decode())
    d.requestResources([{"agent_id": {"value": "a1"}, "resources": task_info("a1")["resources"]}])
    d._teardown()
    calls = {body["type"]: body for body in d.sent}
    request = d.gen_request().decode()
    calls["SUBSCRIBE"] = json.loads(request.split("\r\n\r\n", 1)[1])
    return calls


PYMESOS_CALLS = pymesos_calls()


@pytest.mark.parametrize("kind", sorted(PYMESOS_CALLS))
def test_a_pymesos_call_decodes_to_the_dict_it_sent(kind: str) -> None:
    sent = PYMESOS_CALLS[kind]
    assert codec.decode_call(SCHEDULER, json.dumps(sent).encode(), JSON) == sent


@pytest.mark.parametrize("kind", sorted(PYMESOS_CALLS))
def test_a_pymesos_call_in_protobuf_decodes_to_the_same_dict_as_in_json(kind: str) -> None:
    sent = PYMESOS_CALLS[kind]
    wire = codec.from_dict(SCHEDULER.call(), sent, strict=True).SerializeToString()
    assert codec.decode_call(SCHEDULER, wire, PROTOBUF) == codec.decode_call(SCHEDULER, json.dumps(sent).encode(),
                                                                             JSON)


def test_pymesos_calls_cover_what_the_framework_uses() -> None:
    assert set(PYMESOS_CALLS) >= {"SUBSCRIBE", "ACCEPT", "DECLINE", "REVIVE", "SUPPRESS", "KILL", "ACKNOWLEDGE",
                                  "RECONCILE", "MESSAGE", "REQUEST", "TEARDOWN"}


def test_framework_taskinfo_is_a_mesos_taskinfo_field_for_field() -> None:
    task = framework_task()
    message = codec.from_dict(mesos_pb2.TaskInfo(), task, strict=True)
    assert message.container.type == mesos_pb2.ContainerInfo.DOCKER
    assert message.container.docker.network == mesos_pb2.ContainerInfo.DockerInfo.USER
    assert codec.to_dict(message) == task


# ---- Mesos's JSON rules ---------------------------------------------------------

def decode_json(body: Any) -> dict[str, Any]:
    return codec.decode_call(SCHEDULER, json.dumps(body).encode() if not isinstance(body, bytes) else body, JSON)


def test_json_numbers_and_booleans_may_come_as_strings() -> None:
    call = decode_json({"type": "DECLINE", "framework_id": {"value": "f"},
                        "decline": {"offer_ids": [{"value": "o"}], "filters": {"refuse_seconds": "7.5"}}})
    assert call["decline"]["filters"]["refuse_seconds"] == 7.5
    sub = decode_json({"type": "SUBSCRIBE", "subscribe": {"framework_info": {
        "user": "u", "name": "n", "checkpoint": "true", "failover_timeout": "Infinity"}}})
    info = sub["subscribe"]["framework_info"]
    assert info["checkpoint"] is True and info["failover_timeout"] == float("inf")


def test_json_null_unknown_fields_and_unknown_optional_enums_are_left_out() -> None:
    call = decode_json({"type": "SUBSCRIBE", "x-extra": 1, "framework_id": None,
                        "subscribe": {"framework_info": {"user": "u", "name": "n",
                                                         "capabilities": [{"type": "NOT_A_CAPABILITY"}]}}})
    assert call == {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u", "name": "n",
                                                                          "capabilities": [{}]}}}


def test_an_unknown_call_type_leaves_type_unset_for_the_validator() -> None:
    assert decode_json({"type": "NOPE"}) == {}


def test_an_integer_beyond_a_double_is_an_infinity_as_mesos_reads_it() -> None:
    """Python's float() of it raised OverflowError (a 500); Mesos's JSON parser reads every number as a double."""
    body = (b'{"type":"DECLINE","framework_id":{"value":"f"},"decline":{"offer_ids":[{"value":"o"}],'
            b'"filters":{"refuse_seconds":-1%s}}}' % (b"0" * 400))
    assert decode_json(body)["decline"]["filters"]["refuse_seconds"] == float("-inf")


def test_an_enum_name_that_is_not_utf8_names_no_value() -> None:
    """A lone surrogate made protobuf's name lookup fail with a SystemError (a 500); it is an unknown name."""
    assert decode_json(b'{"type":"\\ud800"}') == {}
    with pytest.raises(CodecError, match="Failed to find enum for"):
        decode_json(b'{"type":"ACCEPT","framework_id":{"value":"f"},"accept":{"offer_ids":[],"operations":'
                    b'[{"type":"LAUNCH","launch":{"task_infos":[{"name":"t","task_id":{"value":"t"},'
                    b'"agent_id":{"value":"a"},"resources":[{"name":"cpus","type":"\\ud800"}]}]}}]}}')


def test_json_values_come_back_typed_as_the_proto_says() -> None:
    """What the handlers get is typed even where protobuf's constructor is laxer than Mesos."""
    call = decode_json({"type": "SUBSCRIBE", "subscribe": {"framework_info": {
        "user": "u", "name": "n", "failover_timeout": 5, "checkpoint": 1}}})
    info = call["subscribe"]["framework_info"]
    assert type(info["failover_timeout"]) is float and info["checkpoint"] is True


@pytest.mark.parametrize("body, message", [
    (b"nope", "Failed to parse body into JSON: "),
    (b'{"a": NaN}', "Failed to parse body into JSON: "),
    (b"[1]", "Failed to convert JSON into Call protobuf: Expecting a JSON object"),
    (b'{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u"}}}',
     "Failed to convert JSON into Call protobuf: Missing required fields: subscribe.framework_info.name"),
    (b'{"type":5}', "Failed to convert JSON into Call protobuf: Not expecting a JSON number for field 'type'"),
    (b'{"type":"DECLINE","framework_id":{"value":"x"},"decline":{"offer_ids":5}}',
     "Failed to convert JSON into Call protobuf: Not expecting a JSON number for field 'offer_ids'"),
    (b'{"type":"DECLINE","framework_id":{"value":"x"},"decline":{"offer_ids":[],"filters":{"refuse_seconds":"abc"}}}',
     "Failed to convert JSON into Call protobuf: Failed to parse 'abc' as a JSON number for field 'refuse_seconds'"),
    (b'{"type":"DECLINE","framework_id":"x"}',
     "Failed to convert JSON into Call protobuf: Not expecting a JSON string for field 'framework_id'"),
    (b'{"type":"DECLINE","framework_id":{"value":"x"},"decline":{"offer_ids":[{"value":1.5}]}}',
     "Failed to convert JSON into Call protobuf: Not expecting a JSON number for field 'value'"),
    (b'{"type":"MESSAGE","framework_id":{"value":"x"},"message":{"agent_id":{"value":"a"},'
     b'"executor_id":{"value":"e"},"data":"!!"}}',
     "Failed to convert JSON into Call protobuf: Failed to base64 decode bytes field 'data': Invalid character '!'"),
], ids=["not-json", "nan", "array", "missing-required", "number-for-enum", "number-for-repeated",
        "bad-number-string", "string-for-message", "number-for-string", "bad-base64"])
def test_bad_json_calls_get_mesos_status_and_message(body: bytes, message: str) -> None:
    with pytest.raises(CodecError) as err:
        decode_json(body)
    assert err.value.status == 400 and err.value.message.startswith(message), err.value.message


@pytest.mark.parametrize("body", [b"\xff\xff\xff", b"\x10\x01\x1a\x02\x0a\x00"], ids=["corrupt", "missing-required"])
def test_bad_protobuf_calls_get_mesos_status_and_message(body: bytes) -> None:
    with pytest.raises(CodecError) as err:
        codec.decode_call(SCHEDULER, body, PROTOBUF)
    assert (err.value.status, err.value.message) == (400, "Failed to parse body into Call protobuf")


def test_deep_json_nesting_is_a_clean_400() -> None:
    with pytest.raises(CodecError) as err:
        decode_json(b'{"type":"SUBSCRIBE","subscribe":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert err.value.status == 400


# ---- dict form out: Mesos's JSON writer ---------------------------------------------

def test_defaults_are_written_as_mesos_writes_them() -> None:
    """Mesos's JSON adds unset optional fields with an explicit default, but not deprecated ones."""
    info = codec.from_dict(mesos_pb2.FrameworkInfo(), {"user": "u", "name": "n"})
    assert codec.to_dict(info) == {"user": "u", "name": "n"}
    assert codec.to_dict(info, defaults=True) == {"user": "u", "name": "n", "failover_timeout": 0.0,
                                                  "checkpoint": False}  # no deprecated role "*"
    command = codec.to_dict(mesos_pb2.CommandInfo(value="true"), defaults=True)
    assert command == {"value": "true", "shell": True}


def test_maps_are_json_objects() -> None:
    task = {"name": "t", "task_id": {"value": "t"}, "agent_id": {"value": "a"},
            "limits": {"cpus": {"value": 2.0}, "mem": {"value": 64.0}}}
    message = codec.from_dict(mesos_pb2.TaskInfo(), task, strict=True)
    assert message.limits["mem"].value == 64.0
    assert codec.to_dict(message) == task


def test_strict_mode_names_a_field_mesos_does_not_have() -> None:
    with pytest.raises(ValueError, match="mesos.v1.TaskStatus has no field 'labels_dict'"):
        codec.from_dict(mesos_pb2.TaskStatus(), {"task_id": {"value": "t"}, "state": "TASK_RUNNING",
                                                 "labels_dict": {}}, strict=True)


def test_task_labels_are_an_array_of_key_values_not_an_object() -> None:
    """The shape issue 15 found in /master/state: Mesos's Labels is {"labels": [{key, value}]}."""
    with pytest.raises(ValueError, match="Not expecting a JSON object for field 'labels'"):
        codec.from_dict(mesos_pb2.Labels(), {"labels": {"a": "b"}})
    assert codec.to_dict(codec.from_dict(mesos_pb2.Labels(), {"labels": [{"key": "a", "value": "b"}]})) == {
        "labels": [{"key": "a", "value": "b"}]}


def test_events_encode_the_same_through_the_fast_and_the_field_by_field_path() -> None:
    event = {"type": "UPDATE", "update": {"status": {
        "task_id": {"value": "t"}, "state": "TASK_FAILED", "source": "SOURCE_EXECUTOR",
        "reason": "REASON_COMMAND_EXECUTOR_FAILED",
        "uuid": base64.b64encode(b"u" * 16).decode(), "data": base64.b64encode(b"\x00\x01").decode(),
        "timestamp": 1.5, "agent_id": {"value": "a"}, "container_status": {"container_id": {"value": "c"}}}}}
    fast = codec.encode_event(SCHEDULER, event, PROTOBUF)
    assert fast == codec.from_dict(scheduler_pb2.Event(), event, strict=True).SerializeToString()
    back = scheduler_pb2.Event()
    back.ParseFromString(fast)
    assert back.update.status.uuid == b"u" * 16 and codec.to_dict(back) == event


def test_an_event_with_a_string_number_still_encodes_by_mesos_rules() -> None:
    """The constructor refuses "5"; the field-by-field path converts it as Mesos would."""
    event = {"type": "SUBSCRIBED", "subscribed": {"framework_id": {"value": "f"},
                                                  "heartbeat_interval_seconds": "15"}}
    back = scheduler_pb2.Event()
    back.ParseFromString(codec.encode_event(SCHEDULER, event, PROTOBUF))
    assert back.subscribed.heartbeat_interval_seconds == 15.0


@pytest.mark.parametrize("api, kind", [
    (MASTER_OPERATOR, "GET_STATE"), (MASTER_OPERATOR, "SUBSCRIBE"), (AGENT_OPERATOR, "GET_CONTAINERS"),
    (EXECUTOR, "SUBSCRIBE")], ids=lambda v: getattr(v, "name", v))
def test_every_api_decodes_its_calls_in_both_formats(api: codec.Api, kind: str) -> None:
    call: dict[str, Any] = {"type": kind}
    if api is EXECUTOR:
        call.update(framework_id={"value": "f"}, executor_id={"value": "e"}, subscribe={})
    wire = codec.from_dict(api.call(), call, strict=True).SerializeToString()
    assert codec.decode_call(api, wire, PROTOBUF) == codec.decode_call(api, json.dumps(call).encode(), JSON) == call


def test_apis_without_events_or_responses_say_so() -> None:
    with pytest.raises(ValueError, match="agent operator API has no events"):
        codec.encode_event(AGENT_OPERATOR, {}, JSON)
    with pytest.raises(ValueError, match="executor API has no responses"):
        codec.encode_response(EXECUTOR, {}, JSON)
