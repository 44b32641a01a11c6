"""Every error a real Mesos 1.12 gave (tests/fixtures/apache_mesos/errors/) is given by our master too.

Each recorded request is replayed against our master with our ids put in
place of Mesos's (the subscribed framework, its stream, an unknown
framework); the status, the text and the headers that matter (Allow,
Content-Type of the error) must be Mesos's. The text after "Failed to parse
body into JSON: " is the JSON parser's own (picojson's in Mesos, Python's
here) and is compared up to that prefix.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.apache_mesos.real_mesos import post

ERRORS = Path(__file__).resolve().parents[1] / "fixtures" / "apache_mesos" / "errors"
RECORDED_FRAMEWORK = "ed20e8c2-2501-431a-a880-7a975c813096-0000"
RECORDED_STREAM = "93eddc07-fc6c-4966-90a8-45d98409cbbc"
PARSER_DEPENDENT = "Failed to parse body into JSON: "
# Answers that come with a stream or an event rather than a text: checked in their own tests.
STREAMS = {"subscribe-unknown-framework-id", "accept-unknown-offer", "accept-unknown-offer-partition-aware"}



def _recorded(name: str) -> dict[str, Any]:
    return json.loads((ERRORS / f"{name}.json").read_text())


def _names() -> list[str]:
    return sorted(p.stem for p in ERRORS.glob("*.json") if p.stem not in STREAMS)


def _ours(value: str, framework_id: str, stream_id: str, unknown: str) -> str:
    return (value.replace(RECORDED_FRAMEWORK, framework_id).replace(RECORDED_STREAM, stream_id)
            .replace("2b958e5f-2de2-4adb-a7e4-e6dbe38df314-0000", unknown))


@pytest.mark.parametrize("name", _names())
def test_our_master_answers_as_mesos_did(cluster, raw, name: str) -> None:
    m = cluster(1)
    sub = raw(m.master_address)
    unknown = f"{uuid.uuid4()}-0000"
    recorded = _recorded(name)
    request, expected = recorded["request"], recorded["response"]
    body = request.get("body")
    raw_body = b"" if body is None else body.encode() if isinstance(body, str) else json.dumps(body).encode()
    raw_body = _ours(raw_body.decode(), sub.framework_id, sub.stream_id, unknown).encode()
    headers = {k: _ours(v, sub.framework_id, sub.stream_id, unknown) for k, v in request["headers"].items()}
    status, got_headers, got = post(m.master_address, request["path"], raw_body, headers, method=request["method"])
    want = _ours(expected.get("body") or "", sub.framework_id, sub.stream_id, unknown)
    text = got.decode()
    if want.startswith(PARSER_DEPENDENT):
        want, text = PARSER_DEPENDENT, text[:len(PARSER_DEPENDENT)]
    assert (status, text) == (expected["status"], want)
    for header in ("Allow", "Content-Type"):
        if header in expected["headers"] and expected["status"] != 202:
            assert got_headers.get(header) == expected["headers"][header], header


def test_subscribe_with_an_unknown_framework_id_registers_it(cluster, raw) -> None:
    """Mesos takes an id it does not know as a framework failing over from a former master."""
    m = cluster(1)
    unknown = f"{uuid.uuid4()}-0000"
    sub = raw(m.master_address, {"type": "SUBSCRIBE", "framework_id": {"value": unknown}, "subscribe": {
        "framework_info": {"user": "u", "name": "x", "id": {"value": unknown}}}})
    assert sub.resp.status_code == 200 and sub.framework_id == unknown


@pytest.mark.parametrize("name,capabilities,state", [
    ("accept-unknown-offer", [], "TASK_LOST"),
    ("accept-unknown-offer-partition-aware", [{"type": "PARTITION_AWARE"}], "TASK_DROPPED"),
], ids=["task-lost", "partition-aware-task-dropped"])
def test_accept_of_an_unknown_offer_answers_202_then_the_update_mesos_sent(cluster, raw, name, capabilities,
                                                                           state) -> None:
    m = cluster(1)
    sub = raw(m.master_address, {"type": "SUBSCRIBE", "subscribe": {"framework_info": {
        "user": "u", "name": "x", "capabilities": capabilities}}})
    recorded = _recorded(name)
    call = recorded["request"]["body"]
    call["framework_id"] = {"value": sub.framework_id}
    answer = sub.call(call)
    assert (answer.status_code, answer.text) == (202, "")
    update = sub.next_of("UPDATE")["update"]["status"]
    expected = recorded["update"]
    assert update["state"] == expected["state"] == state
    for key in ("message", "source", "reason"):
        assert update[key] == expected[key], key
    assert update["task_id"] == expected["task_id"]


STANDBY = ERRORS.parent / "zk-3-masters" / "standby"
RECORDED_LEADER = "172.31.250.22:5050"


@pytest.mark.parametrize("name", sorted(p.stem for p in STANDBY.glob("*.json")))
def test_a_standby_answers_as_a_mesos_standby_did(cluster, name: str) -> None:
    """Redirects to the leader where Mesos redirects (307, `//LEADER/master/...`), serves the rest itself."""
    m = cluster(0)
    leader = "192.0.2.10:5050"   # documentation range; never contacted

    async def demote() -> None:
        m.server.master.leader_address = leader
    m.call(demote())
    recorded = json.loads((STANDBY / f"{name}.json").read_text())
    request, expected = recorded["request"], recorded["response"]
    body = request.get("body")
    status, headers, _ = post(m.master_address, request["path"], json.dumps(body).encode() if body else b"",
                              request["headers"], method=request["method"])
    assert status == expected["status"]
    if "Location" in expected["headers"]:
        assert headers["Location"] == expected["headers"]["Location"].replace(RECORDED_LEADER, leader)
