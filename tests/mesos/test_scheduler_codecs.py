"""The scheduler API in protobuf and in JSON against our master: the same conversation a real Mesos 1.12
held in tests/apache_mesos (SUBSCRIBE, OFFERS, ACCEPT/LAUNCH, UPDATEs acknowledged, RECONCILE, TEARDOWN),
every body encoded by our .proto messages and every event decoded strictly by them.

The agent runs real processes (no Docker), so the command task finishes.
"""

from __future__ import annotations

import http.client
import json

import pytest

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import SCHEDULER, MediaType
from scylla_singa.mesos.api.proto import scheduler_pb2
from tests.apache_mesos import flows
from tests.apache_mesos.real_mesos import post, unknown_fields


@pytest.mark.parametrize("media_type", [MediaType.PROTOBUF, MediaType.JSON], ids=["protobuf", "json"])
def test_a_command_task_runs_to_the_end_in_either_format(cluster, media_type: MediaType) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    run = flows.run_command_task(m.master_address, media_type, timeout=30, user="nobody")
    kinds = list(run.records)
    assert kinds[:3] == ["SUBSCRIBED", "HEARTBEAT", "OFFERS"], kinds
    assert [k for k in kinds if k.startswith("UPDATE TASK")] == [
        "UPDATE TASK_STARTING", "UPDATE TASK_RUNNING", "UPDATE TASK_FINISHED"]
    assert {k: status for k, (status, _) in run.answers.items()} == {
        "ACCEPT": 202, "ACKNOWLEDGE TASK_STARTING": 202, "ACKNOWLEDGE TASK_RUNNING": 202,
        "ACKNOWLEDGE TASK_FINISHED": 202, "RECONCILE": 202, "TEARDOWN": 202}
    for kind, records in run.records.items():
        for record in records:
            event = _strict_event(record, media_type)
            assert list(unknown_fields(event)) == [], kind
    offer = _strict_event(run.records["OFFERS"][0], media_type).offers.offers[0]
    # the framework is MULTI_ROLE in role "compat": every offered resource says so, as Mesos writes it
    assert offer.allocation_info.role == "compat"
    assert {r.allocation_info.role for r in offer.resources} == {"compat"}


def test_subscribe_answers_in_the_format_accept_allows(cluster) -> None:
    m = cluster(1)
    body = codec.from_dict(SCHEDULER.call(), {"type": "SUBSCRIBE", "subscribe": {
        "framework_info": {"user": "u", "name": "accepts"}}}).SerializeToString()
    cases = [(None, MediaType.JSON), ("application/x-protobuf", MediaType.PROTOBUF),
             ("application/json;q=0, */*", MediaType.PROTOBUF), ("*/*", MediaType.JSON)]
    for accept, chosen in cases:
        headers = {"Content-Type": MediaType.PROTOBUF, **({"Accept": accept} if accept else {})}
        status, answer_headers, _ = _first_bytes(m.master_address, body, headers)
        assert (status, answer_headers.get("Content-Type")) == (200, chosen), accept


def _strict_event(record: bytes, media_type: MediaType) -> scheduler_pb2.Event:
    """One record as a scheduler Event; JSON must hold no field the Event lacks."""
    event = scheduler_pb2.Event()
    if media_type is MediaType.PROTOBUF:
        event.ParseFromString(record)
        return event
    return codec.from_dict(event, json.loads(record), strict=True)


def _first_bytes(master: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """SUBSCRIBE and read only the head of the stream (the connection is closed after)."""
    host, port = master.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("POST", "/api/v1/scheduler", body, headers)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read1(64)
    finally:
        conn.close()


def test_the_master_prefix_serves_the_scheduler_api_too(cluster) -> None:
    m = cluster(1)
    status, _, body = post(m.master_address, "/master/api/v1/scheduler", b"{}", {"Content-Type": "application/json"})
    assert (status, body) == (400, b"Failed to validate scheduler::Call: Expecting 'type' to be present")
