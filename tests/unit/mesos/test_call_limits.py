"""The stateless validators of issue 14 item 5, without a master: numbers, depth, resources, stored records,
and the head clock's framing."""

from __future__ import annotations

import math

import pytest

from scylla_singa.mesos.api.call_validation import (MAX_DURATION_S, CallInvalid, non_finite_field,
                                                    validate_scheduler_call)
from scylla_singa.mesos.api.codec import MAX_JSON_DEPTH, SCHEDULER, CodecError, MediaType, decode_call, json_depth
from scylla_singa.mesos.api.header_deadline import HeadClock
from scylla_singa.mesos.api.resources import ResourceError, Resources
from scylla_singa.mesos.master.master_store import record_problem

FID = {"value": "f"}


@pytest.mark.parametrize("data,found", [
    ({"a": [1, 2.5, {"b": float("inf")}]}, ("a[2].b", math.inf)),
    ({"a": {"b": -math.inf}}, ("a.b", -math.inf)),
    ([0, 1, float("nan")], ("[2]", None)),
    ({"a": 1e308, "b": [0.0, -1.0], "c": "Infinity"}, None),
], ids=["inf-deep", "minus-inf", "nan-in-list", "all-finite"])
def test_non_finite_field_names_the_path(data, found) -> None:
    got = non_finite_field(data)
    if found is None:
        assert got is None or (got[0] == "[2]" and math.isnan(got[1]))
    elif found[1] is None:
        assert got[0] == found[0] and math.isnan(got[1])
    else:
        assert got == found


def test_json_depth_counts_objects_and_arrays_and_stops_early() -> None:
    assert (json_depth(5), json_depth([]), json_depth({"a": [{}]})) == (0, 1, 3)
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert json_depth(deep) == MAX_JSON_DEPTH + 1   # stops once past the cap: cheap on any input


@pytest.mark.parametrize("body,text", [
    (b'{"type":"REVIVE","framework_id":{"value":"f"},"x":' + b"[" * 65 + b"]" * 65 + b"}",
     "nested deeper than 64 levels"),
    (b"[" * 5000 + b"]" * 5000, "nested deeper than 64 levels"),
], ids=["65-levels", "5000-levels"])
def test_decode_call_refuses_deep_json(body, text) -> None:
    with pytest.raises(CodecError) as refused:
        decode_call(SCHEDULER, body, MediaType.JSON)
    assert (refused.value.status, text in refused.value.message) == (400, True)


def test_decode_call_takes_64_levels() -> None:
    body = b'{"type":"REVIVE","framework_id":{"value":"f"},"x":' + b"[" * 63 + b"]" * 63 + b"}"
    assert decode_call(SCHEDULER, body, MediaType.JSON)["type"] == "REVIVE"


def subscribe(**fields) -> dict:
    return {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u", "name": "n", **fields}}}


@pytest.mark.parametrize("call,text", [
    (subscribe(failover_timeout=math.inf), "'subscribe.framework_info.failover_timeout' is not a finite number (inf)"),
    (subscribe(failover_timeout=-1.0), "'subscribe.framework_info.failover_timeout' (-1) must not be negative"),
    (subscribe(failover_timeout=MAX_DURATION_S * 2), "is out of range"),
    (subscribe(labels={"labels": [{"key": "k", "value": "v" * 70_000}]}), "this master keeps at most 65536"),
    ({"type": "DECLINE", "framework_id": FID, "decline": {"offer_ids": [], "filters": {"refuse_seconds": math.nan}}},
     "'decline.filters.refuse_seconds' is not a finite number (nan)"),
    ({"type": "ACCEPT", "framework_id": FID, "accept": {"filters": {"refuse_seconds": 1e11}}},
     "'accept.filters.refuse_seconds' (1e+11 seconds) is out of range"),
], ids=["failover-inf", "failover-negative", "failover-huge", "info-huge", "refuse-nan", "refuse-huge"])
def test_scheduler_call_numbers_are_refused_naming_the_field(call, text) -> None:
    with pytest.raises(CallInvalid) as refused:
        validate_scheduler_call(call)
    assert text in refused.value.message and refused.value.message.startswith("Failed to validate scheduler::Call: ")


@pytest.mark.parametrize("call", [
    subscribe(failover_timeout=0.0), subscribe(failover_timeout=604800.0),
    {"type": "DECLINE", "framework_id": FID, "decline": {"offer_ids": [], "filters": {"refuse_seconds": -5.0}}},
], ids=["failover-zero", "failover-week", "refuse-negative-is-zero-as-in-mesos"])
def test_scheduler_call_numbers_mesos_takes_pass(call) -> None:
    validate_scheduler_call(call)


def scalar(name: str, amount: float) -> dict:
    return {"name": name, "type": "SCALAR", "scalar": {"value": amount}}


@pytest.mark.parametrize("items,text", [
    ([scalar("cpus", math.nan)], "Invalid scalar resource: value nan is not finite"),
    ([scalar("mem", math.inf)], "Invalid scalar resource: value inf is not finite"),
    ([scalar("cpus", -0.5)], "Resource 'cpus:-0.5' is invalid: Invalid scalar resource: value < 0"),
    ([{"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": 9, "end": 1}]}}], "begin > end ([9-1])"),
    ([{"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": 1, "end": 5}, {"begin": 5, "end": 6}]}}],
     "overlapping ranges ([1-5] and [5-6])"),
    ([{"name": "ids", "type": "SET", "set": {"item": ["a", "b", "a"]}}], "duplicated elements"),
], ids=["nan", "inf", "negative", "reversed", "overlapping", "set-twice"])
def test_resources_from_json_applies_mesos_resource_validation(items, text) -> None:
    with pytest.raises(ResourceError) as refused:
        Resources.from_json(items)
    assert text in str(refused.value)


def test_resources_from_json_takes_touching_ranges_and_zero() -> None:
    got = Resources.from_json([scalar("cpus", 0.0), {"name": "ports", "type": "RANGES", "ranges": {
        "range": [{"begin": 1, "end": 4}, {"begin": 5, "end": 6}]}}])
    assert got.ranges == {"ports": ((1, 6),)} and got.scalars == {}


@pytest.mark.parametrize("fid,record,text", [
    ("f", {"info": {"user": "u", "name": "n"}, "failover_timeout": 5, "registered_time": 1}, None),
    ("", {"info": {"user": "u", "name": "n"}}, "its id is not a string"),
    ("f", {"info": "x"}, "it has no FrameworkInfo object"),
    ("f", {"info": {"user": "u", "name": "n"}, "failover_timeout": True}, "failover_timeout True"),
    ("f", {"info": {"user": "u", "name": "n"}, "registered_time": -1}, "registered_time -1"),
    ("f", {"info": {"user": "u", "name": "n", "failover_timeout": "abc"}}, "does not convert"),
    ("f", {"info": {"name": "n"}}, "does not convert"),
], ids=["good", "no-id", "info-text", "timeout-bool", "time-negative", "info-timeout-text", "no-user"])
def test_stored_framework_records_are_judged_like_a_subscribe(fid, record, text) -> None:
    problem = record_problem(fid, record)
    assert problem is None if text is None else text in problem, problem


@pytest.mark.parametrize("chunks,states", [
    ([b"GET / HT", b"TP/1.1\r\nHost: x\r\n\r", b"\n"], [True, True, False]),
    ([b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", b"cde", b"G", b"ET / HTTP/1.1\r\n\r\n"],
     [False, False, True, False]),
    ([b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nabGET / HT"], [True]),
    ([b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", b"frames"], [False, False]),
    ([b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"5\r\nhello"], [False, False]),
    ([b"x" * 70_000], [False]),
], ids=["head-in-pieces", "body-then-next-head", "pipelined", "upgrade-unwatched", "chunked-unwatched",
        "oversized-head-left-to-aiohttp"])
def test_head_clock_knows_when_a_head_is_being_sent(chunks, states) -> None:
    clock = HeadClock()
    assert [clock.feed(chunk) for chunk in chunks] == states
