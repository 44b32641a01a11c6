"""The master's hot-path shortcuts (issue 17) give exactly what the general paths give.

- An ACKNOWLEDGE skips the trip through the protobuf Call message only when
  that trip would return it unchanged: every body here is decoded both ways
  (the full conversion forced by turning the shortcut off) and must agree,
  answer or error alike.
- compact_json writes JSON that parses back to the same value, and falls back
  to json for what orjson cannot write.
- event_loop.run runs on uvloop unless SCYLLA_EVENT_LOOP=asyncio says otherwise.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api import codec, compact_json, event_loop
from scylla_singa.mesos.api.call_validation import non_finite_field
from scylla_singa.mesos.api.codec import SCHEDULER, CodecError, MediaType


def _ack(uid: Any = None, task_id: Any = "bg-1-1", **extra: Any) -> dict[str, Any]:
    body = {"agent_id": {"value": "m-S1"}, "task_id": {"value": task_id} if isinstance(task_id, str) else task_id,
            "uuid": base64.b64encode(uuid.uuid4().bytes).decode() if uid is None else uid}
    return {"type": "ACKNOWLEDGE", "framework_id": {"value": "m-0001"}, "acknowledge": body, **extra}


def _decode(body: bytes, shortcut: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        if not shortcut:
            m.setattr(codec, "_plain_acknowledge", lambda data: False)
        try:
            return codec.decode_call(SCHEDULER, body, MediaType.JSON)
        except CodecError as exc:
            return ("refused", exc.status, exc.message)


BODIES = {
    "as frameworks send it": _ack(),
    "uuid without padding": _ack("YWJj"),
    "uuid with a space": _ack("YW Jj"),
    "uuid not base64": _ack("!!!!"),
    "uuid not canonical (bits after the end)": _ack("YR=="),
    "uuid empty": _ack(""),
    "uuid a number": _ack(12),
    "uuid non-ASCII": _ack("abc\u00e9"),
    "task id non-ASCII": _ack(task_id="t\u00e9\u4e2d"),
    "task id a lone surrogate": _ack(task_id="\ud800"),
    "task id a number": _ack(task_id={"value": 7}),
    "task id with another field": _ack(task_id={"value": "t", "x": 1}),
    "an unknown top-level field": _ack(extra_field=1),
    "framework id null": {**_ack(), "framework_id": None},
}


@pytest.mark.parametrize("name", list(BODIES))
def test_an_acknowledge_decodes_the_same_with_and_without_the_shortcut(name: str, monkeypatch) -> None:
    body = json.dumps(BODIES[name]).encode()
    assert _decode(body, True, monkeypatch) == _decode(body, False, monkeypatch)


def test_the_shortcut_takes_the_acknowledge_frameworks_send(monkeypatch) -> None:
    """Not vacuous: the usual ACKNOWLEDGE does not reach the protobuf conversion at all."""
    def no_conversion(*args: Any) -> None:
        raise AssertionError("converted through the Call message")
    monkeypatch.setattr(codec, "message_from_dict", no_conversion)
    data = _ack()
    assert codec.decode_call(SCHEDULER, json.dumps(data).encode(), MediaType.JSON) == data


@pytest.mark.parametrize("value", [
    {"type": "UPDATE", "update": {"status": {"task_id": {"value": "t\u00e9"}, "timestamp": 1.7e9, "state": "X"}}},
    [{"type": "ACK", "uuid": "YWJj"}, {"type": "PONG"}],
    {"big": 2 ** 70, "small": -(2 ** 63), "f": 1e16, "nested": [[[]]], "s": "\u2028\"\\"},
])
def test_compact_json_parses_back_to_the_same_value(value: Any) -> None:
    data = compact_json.dumps(value)
    assert isinstance(data, bytes) and b" " not in data.replace(b"\\u2028", b"")
    assert json.loads(data) == value
    if not (isinstance(value, dict) and "big" in value):   # orjson reads no integers beyond 64 bits
        assert compact_json.loads(data) == value


def test_compact_json_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        compact_json.loads(b"{not json")


@pytest.mark.parametrize("body,expected", [
    (b"", False), (b"1" * 18, False), (b"1" * 19, True), (b"x" + b"9" * 19 + b"x", True),
    (b"123456789012345678.9", False), (b"1234567890 123456789", False), (b"\xff0123456789012345678\x00", True),
    (b"\xd9\xa0" * 19, False),   # Arabic-Indic digits in UTF-8: not ASCII digits, as re's [0-9] said
])
def test_a_long_digit_run_is_found_where_re_found_it(body: bytes, expected: bool) -> None:
    assert compact_json.has_long_digit_run(body) is expected


@pytest.mark.parametrize("body", [b'{"a":18446744073709551616}', b'{"a":123456789012345678901234567890}',
                                  b'{"a":-9223372036854775809,"b":1.5}', b'{"a":18446744073709551615}',
                                  b'{"a":[1,2.5,"x"]}', b'{"a":NaN}'])
def test_loads_as_json_gives_what_json_gives(body: bytes) -> None:
    """Integers beyond 64 bits stay integers (orjson would make them floats); NaN is json's."""
    got = compact_json.loads_as_json(body, parse_constant=float)
    want = json.loads(body, parse_constant=float)
    assert repr(got) == repr(want) and type(got["a"]) is type(want["a"])


_ACCEPT = {"type": "ACCEPT", "framework_id": {"value": "m-0001"},
           "accept": {"offer_ids": [{"value": "m-O1"}], "filters": {"refuse_seconds": 1},
                      "operations": [{"type": "LAUNCH", "launch": {"task_infos": [{
                          "name": "bg", "task_id": {"value": "bg-1-1"}, "agent_id": {"value": "m-S1"},
                          "command": {"value": "sleep 1", "shell": True},
                          "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 4.0}}]}]}}]}}


def _accept_with(cpus: str, refuse: str = "1") -> bytes:
    return json.dumps(_ACCEPT).encode().replace(b'"value": 4.0', b'"value": ' + cpus.encode()).replace(
        b'"refuse_seconds": 1', b'"refuse_seconds": ' + refuse.encode())


@pytest.mark.parametrize("body,finite", [
    (json.dumps(_ACCEPT).encode(), True),            # orjson parsed it, the message keeps it: known finite
    (json.dumps(_ack()).encode(), True),
    (_accept_with("1e400"), False),                  # orjson refuses it; json reads an infinity
    (_accept_with("4", refuse="1" * 19), False),     # a 19-digit run goes to json
    (_accept_with('"Infinity"'), False),             # a string for a double: the message converts it
])
def test_a_call_is_known_finite_only_where_orjson_parsed_it_and_nothing_converted_it(body: bytes,
                                                                                   finite: bool) -> None:
    call, known = codec.decode_call_noting_finite(SCHEDULER, body, MediaType.JSON)
    assert known is finite
    assert call == codec.decode_call(SCHEDULER, body, MediaType.JSON)


def test_a_protobuf_call_is_never_known_finite() -> None:
    message = SCHEDULER.call()
    message.type = message.DECLINE
    message.framework_id.value = "m-0001"
    message.decline.filters.refuse_seconds = math.inf
    call, known = codec.decode_call_noting_finite(SCHEDULER, message.SerializeToString(), MediaType.PROTOBUF)
    assert known is False and non_finite_field(call) == ("decline.filters.refuse_seconds", math.inf)


_NUMBER_TEXT = st.one_of(st.integers(-(2 ** 70), 2 ** 70).map(str), st.floats(allow_nan=False).map(repr),
                         st.sampled_from(["1e400", "-1e309", "1e308", "2.5e-400", "0.1", "-0", '"Infinity"',
                                          '"NaN"', "1" * 20]))


@settings(max_examples=300, deadline=None)
@given(cpus=_NUMBER_TEXT, refuse=_NUMBER_TEXT)
def test_whatever_is_known_finite_has_no_infinite_or_nan_number(cpus: str, refuse: str) -> None:
    """The claim the validation relies on to skip its walk: `known` is never said of a call holding one."""
    body = _accept_with(cpus.replace("inf", "1e400"), refuse.replace("inf", "1e400"))
    try:
        call, known = codec.decode_call_noting_finite(SCHEDULER, body, MediaType.JSON)
    except CodecError:
        return
    if known:
        assert non_finite_field(call) is None


def _loop_module() -> str:
    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__
    return event_loop.run(which())


def test_the_event_loop_is_uvloop_unless_asked_for_asyncio(monkeypatch) -> None:
    pytest.importorskip("uvloop", reason="uvloop is not installed here (a dependency: pip install -e .)")
    monkeypatch.delenv(event_loop.LOOP_ENV, raising=False)
    assert event_loop.loop_name() == "uvloop" and _loop_module().startswith("uvloop")
    monkeypatch.setenv(event_loop.LOOP_ENV, "asyncio")
    assert event_loop.loop_name() == "asyncio" and _loop_module().startswith("asyncio")
