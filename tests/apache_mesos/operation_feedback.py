"""One scheduler's conversation about offer operations with an `id` (operation feedback), as dicts.

The same steps go to a live Apache Mesos 1.12 and to ours; the test compares
the two transcripts. What differs by nature between two masters (status
uuids, agent and framework ids, resource ranges) is replaced by
placeholders, so everything else must be equal.
"""

from __future__ import annotations

from typing import Any

import json
import re

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import MASTER_OPERATOR, MediaType

from .flows import scheduler_call, subscribe
from .real_mesos import EventStream, operator_call, post

ROLE = "compat"
TIMEOUT_S = 30.0


def _event(stream: EventStream, kind: str) -> dict[str, Any]:
    event, _ = stream.next_of(kind, TIMEOUT_S)
    return codec.to_dict(event)


def _reserve(op_id: str | None, role: str, cpus: float) -> dict[str, Any]:
    resource = {"name": "cpus", "type": "SCALAR", "scalar": {"value": cpus}, "allocation_info": {"role": ROLE},
                "reservations": [{"type": "DYNAMIC", "role": role}]}
    op: dict[str, Any] = {"type": "RESERVE", "reserve": {"resources": [resource]}}
    if op_id is not None:
        op["id"] = {"value": op_id}
    return op


def _operations_metrics(master: str) -> dict[str, float]:
    status, _, body = post(master, "/metrics/snapshot", b"", method="GET")
    assert status == 200, f"/metrics/snapshot answered {status}"
    return {k: v for k, v in json.loads(body).items() if k.startswith("master/operations/")}


def converse(master: str, media_type: MediaType = MediaType.JSON) -> list[tuple[str, Any]]:
    """(step, what came back) for each step; answers are (HTTP status, body) and events are dicts."""
    stream = subscribe(master, media_type, name="operation-feedback", user="nobody")
    assert stream.status == 200, f"SUBSCRIBE answered {stream.status}"
    framework_id = _event(stream, "SUBSCRIBED")["subscribed"]["framework_id"]["value"]
    fw = {"value": framework_id}
    out: list[tuple[str, Any]] = []

    def call(step: str, kind: str, payload: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"type": kind, "framework_id": fw}
        if payload is not None:
            body[kind.lower()] = payload
        status, answer = scheduler_call(master, stream, body, media_type)
        out.append((step, (status, answer.decode())))

    try:
        offer = _event(stream, "OFFERS")["offers"]["offers"][0]
        agent = offer["agent_id"]
        task = {"name": "t", "task_id": {"value": "with-id"}, "agent_id": agent,
                "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1},
                               "allocation_info": {"role": ROLE}}],
                "command": {"value": "true"}}
        call("accept", "ACCEPT", {"offer_ids": [offer["id"]], "operations": [
            _reserve("op-reserve", ROLE, 0.5),
            _reserve(None, ROLE, 0.25),
            _reserve("op-other-role", "not-mine", 0.5),
            {"type": "LAUNCH", "id": {"value": "op-launch"}, "launch": {"task_infos": [task]}}],
            "filters": {"refuse_seconds": 3600.0}})
        out.append(("task with an operation id", _event(stream, "UPDATE")))
        updates = sorted((_event(stream, "UPDATE_OPERATION_STATUS") for _ in range(2)),
                         key=lambda e: e["update_operation_status"]["status"]["operation_id"]["value"])
        out += [(f"update {u['update_operation_status']['status']['operation_id']['value']}", u) for u in updates]
        finished = next(u["update_operation_status"]["status"] for u in updates
                        if u["update_operation_status"]["status"]["operation_id"]["value"] == "op-reserve")

        call("reconcile: known, unknown on the agent, unknown without agent", "RECONCILE_OPERATIONS", {"operations": [
            {"operation_id": {"value": "op-reserve"}, "agent_id": agent},
            {"operation_id": {"value": "never"}, "agent_id": agent},
            {"operation_id": {"value": "nowhere"}}]})
        out += [("reconciled", _event(stream, "UPDATE_OPERATION_STATUS")) for _ in range(3)]
        call("implicit reconciliation", "RECONCILE_OPERATIONS", {})
        out.append(("reconciled implicitly", _event(stream, "UPDATE_OPERATION_STATUS")))

        operations, _ = operator_call(master, MASTER_OPERATOR, {"type": "GET_OPERATIONS"}, MediaType.JSON)
        out.append(("GET_OPERATIONS before the acknowledgement", codec.to_dict(operations)))
        call("acknowledge", "ACKNOWLEDGE_OPERATION_STATUS", {
            "agent_id": agent, "operation_id": {"value": "op-reserve"}, "uuid": finished["uuid"]["value"]})
        call("acknowledge again", "ACKNOWLEDGE_OPERATION_STATUS", {
            "agent_id": agent, "operation_id": {"value": "op-reserve"}, "uuid": finished["uuid"]["value"]})
        call("reconcile after the acknowledgement", "RECONCILE_OPERATIONS", {"operations": [
            {"operation_id": {"value": "op-reserve"}, "agent_id": agent}]})
        out.append(("reconciled after the acknowledgement", _event(stream, "UPDATE_OPERATION_STATUS")))
        call("revive", "REVIVE", {})
        resources = _event(stream, "OFFERS")["offers"]["offers"][0]["resources"]
        out.append(("offered again (in any order)", sorted(resources, key=lambda r: json.dumps(r, sort_keys=True))))
        operations, _ = operator_call(master, MASTER_OPERATOR, {"type": "GET_OPERATIONS"}, MediaType.JSON)
        out.append(("GET_OPERATIONS after it", codec.to_dict(operations)))
        out.append(("metrics", _operations_metrics(master)))
    finally:
        call("teardown", "TEARDOWN")
        stream.close()
    return out


# An agent as Mesos names it in a message: "<agent id> at <libprocess pid> (<hostname>)".
AGENT_IN_TEXT = re.compile(r" at slave\(\d+\)@[\d.]+:\d+ \([^)]*\)")
NATURAL = ("uuid", "timestamp")   # fresh on every run


def comparable(transcript: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The transcript with what differs between two masters by nature replaced: uuids and timestamps
    dropped, agent and framework ids (also in texts) and an agent's pid and hostname as placeholders."""
    ids: dict[str, str] = {}

    def clean(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: clean(v, k) for k, v in value.items() if k not in NATURAL}
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, str):
            if key == "value" and value in ids:
                return ids[value]
            for found, placeholder in ids.items():
                value = value.replace(found, placeholder)
            return AGENT_IN_TEXT.sub(" at <agent pid> (<agent hostname>)", value)
        return value

    for _, answer in transcript:
        _collect_ids(answer, ids)
    return [(step, clean(answer)) for step, answer in transcript]


def _collect_ids(value: Any, ids: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("agent_id", "framework_id") and isinstance(v, dict) and "value" in v:
                ids.setdefault(v["value"], f"<{k} {len(ids)}>")
            _collect_ids(v, ids)
    elif isinstance(value, list):
        for v in value:
            _collect_ids(v, ids)

