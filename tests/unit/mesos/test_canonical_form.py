"""A call in the dict form skips the protobuf trip, and skipping it never changes an answer (issue 17).

Every body here is decoded twice: as the master decodes it, and with the
shortcut turned off (the full conversion through the Call message). The two
must agree, value or error alike. The bodies are the calls frameworks sent
a real Mesos 1.12 (tests/fixtures/apache_mesos/scheduler), our own
framework's Docker task, and each of them with one value replaced by
something the dict form does not hold exactly (hypothesis picks where and
what).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.canonical_form import in_canonical_form
from scylla_singa.mesos.api.codec import SCHEDULER, CodecError, MediaType

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "apache_mesos" / "scheduler"


def _docker_task_accept() -> dict[str, Any]:
    from tests.unit.mesos.test_codec import framework_task
    task = framework_task()
    return {"type": "ACCEPT", "framework_id": {"value": "fw-1"},
            "accept": {"offer_ids": [{"value": "o-1"}], "filters": {"refuse_seconds": 5.0},
                       "operations": [{"type": "LAUNCH", "launch": {"task_infos": [task]}}]}}


def _calls() -> dict[str, dict[str, Any]]:
    calls = {path.stem: json.loads(path.read_text())["request"]["body"] for path in sorted(FIXTURES.glob("*.json"))}
    calls["ACCEPT of our Docker task"] = _docker_task_accept()
    calls["DECLINE as the scale benchmark sends it"] = {"type": "DECLINE", "framework_id": {"value": "f"},
                                                         "decline": {"offer_ids": [{"value": "o"}],
                                                                     "filters": {"refuse_seconds": 1}}}
    calls["MESSAGE with bytes"] = {"type": "MESSAGE", "framework_id": {"value": "f"}, "message": {
        "agent_id": {"value": "a"}, "executor_id": {"value": "e"}, "data": "aGVsbG8="}}
    return calls


CALLS = _calls()


def _decode(body: bytes, shortcut: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        if not shortcut:
            m.setattr(codec, "in_canonical_form", lambda descriptor, data: False)
            m.setattr(codec, "_plain_acknowledge", lambda data: False)
        try:
            return codec.decode_call(SCHEDULER, body, MediaType.JSON)
        except CodecError as exc:
            return ("refused", exc.status, exc.message)


# An implicit RECONCILE spells out `"tasks": []`, which the dict form leaves out (an empty repeated field).
NOT_IN_THE_DICT_FORM = {"RECONCILE-implicit"}


def test_an_empty_list_is_not_the_dict_form_and_takes_the_full_conversion() -> None:
    data = CALLS["RECONCILE-implicit"]
    assert not in_canonical_form(SCHEDULER.call.DESCRIPTOR, data)
    assert codec.decode_call(SCHEDULER, json.dumps(data).encode(), MediaType.JSON) == {
        "type": "RECONCILE", "framework_id": data["framework_id"], "reconcile": {}}


@pytest.mark.parametrize("name", sorted(set(CALLS) - NOT_IN_THE_DICT_FORM))
def test_the_calls_frameworks_send_are_in_the_dict_form_and_decode_to_themselves(name: str, monkeypatch) -> None:
    """Not vacuous: these calls take the shortcut (the protobuf conversion is never reached)."""
    def no_conversion(*args: Any) -> None:
        raise AssertionError("converted through the Call message")
    data = CALLS[name]
    assert in_canonical_form(SCHEDULER.call.DESCRIPTOR, data)
    monkeypatch.setattr(codec, "message_from_dict", no_conversion)
    assert codec.decode_call(SCHEDULER, json.dumps(data).encode(), MediaType.JSON) == data


def test_an_integer_for_a_double_becomes_a_float_as_the_conversion_makes_it(monkeypatch) -> None:
    body = json.dumps(CALLS["DECLINE as the scale benchmark sends it"]).encode()
    quick = codec.decode_call(SCHEDULER, body, MediaType.JSON)
    assert type(quick["decline"]["filters"]["refuse_seconds"]) is float
    assert quick == _decode(body, False, monkeypatch)


# Values the dict form never holds as they are, or holds only in some fields: each is converted,
# dropped or refused by the full conversion, or kept where the field takes it.
ODD_VALUES = [None, [], {}, 1, -1, 0, 1.5, 7.0, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 1, 2 ** 63, 2 ** 64, 2 ** 70,
              10 ** 400, True, "5", "2.5",
              "true", "Infinity", "SCALAR", "NOT_AN_ENUM", "\ud800", "t\u00e9", "YWJj", "YR==", "!!", "", [None],
              [{}], {"value": "x"}, {"value": 1}, {"unknown": 1}]


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value a mutation can go: each key and list item, nested."""
    out: list[tuple[Any, ...]] = []
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, child in items:
        out.append(prefix + (key,))
        out.extend(_paths(child, prefix + (key,)))
    return out


def _replaced(data: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(data)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(list(CALLS)), pick=st.integers(min_value=0), new=st.sampled_from(ODD_VALUES),
       add_key=st.booleans())
def test_a_body_with_one_odd_value_decodes_the_same_with_and_without_the_shortcut(
        name: str, pick: int, new: Any, add_key: bool) -> None:
    data = CALLS[name]
    paths = _paths(data)
    path = paths[pick % len(paths)]
    if add_key and isinstance(_parent(data, path), dict):
        path = path[:-1] + ("no_such_field",)   # an unknown name beside the chosen one
    body = json.dumps(_replaced(data, path, new)).encode()
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _decode(body, True, monkeypatch) == _decode(body, False, monkeypatch)


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data[key]
    return data


@pytest.mark.parametrize("body", [
    b'{"type":"REVIVE","framework_id":{"value":"f"},"revive":{"roles":["a","b"]}}',
    b'{"type":"DECLINE","framework_id":{"value":"f"},"decline":{"offer_ids":[{"value":"o"}],'
    b'"filters":{"refuse_seconds":123456789012345678901234567890}}}',
    b'{"type":"DECLINE","framework_id":{"value":"f"},"decline":{"offer_ids":[{"value":"o"}],'
    b'"filters":{"refuse_seconds":1e400}}}',
    b'\xef\xbb\xbf{"type":"REVIVE","framework_id":{"value":"f"}}',
    b'{"type":"KILL","framework_id":{"value":"\\ud800"},"kill":{"task_id":{"value":"t"}}}',
    b'{"type":"KILL","type":"REVIVE","framework_id":{"value":"f"}}',
    b'{"type":"REVIVE","framework_id":{"value":"f"}}   ',
    b'{"type":"REVIVE","framework_id":{"value":"f"}} x',
], ids=["roles", "integer beyond 64 bits", "number beyond a double", "byte-order mark", "lone surrogate",
        "duplicate key", "trailing space", "trailing garbage"])
def test_json_parsing_answers_as_json_does(body: bytes, monkeypatch) -> None:
    """The faster parser gives json's value or json's refusal: where they differ, json decides."""
    got = _decode(body, True, monkeypatch)
    with monkeypatch.context() as m:
        m.setattr(codec.compact_json, "orjson", None)
        assert got == _decode(body, True, m)
