"""Scheduler and operator conversations with a Mesos master, every body encoded by our codec.

One function per conversation, returning the raw records and answers, so
the apache_mesos tests assert on them and `record.py` can keep them as
fixtures. Each works in either media type.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import SCHEDULER, MediaType

from .real_mesos import EventStream, encode_call, post

SCHEDULER_PATH = "/api/v1/scheduler"


@dataclass
class TaskRun:
    """What a framework saw while one command task ran: raw event records by kind, in order."""

    framework_id: str
    stream_id: str
    records: dict[str, list[bytes]] = field(default_factory=dict)
    answers: dict[str, tuple[int, bytes]] = field(default_factory=dict)

    def add(self, kind: str, record: bytes) -> None:
        self.records.setdefault(kind, []).append(record)


def framework_info(name: str, role: str = "compat", user: str = "root") -> dict[str, Any]:
    """A MULTI_ROLE framework (so offers carry allocation_info), as mesos-go's example declares one. `user`:
    our agent refuses root tasks unless allowed, so runs on it use "nobody"."""
    return {"user": user, "name": name, "failover_timeout": 60.0, "roles": [role],
            "capabilities": [{"type": "MULTI_ROLE"}, {"type": "TASK_KILLING_STATE"}]}


def subscribe(master: str, media_type: MediaType, name: str = "mesos-compat", user: str = "root") -> EventStream:
    call = {"type": "SUBSCRIBE", "subscribe": {"framework_info": framework_info(name, user=user)}}
    return EventStream(master, SCHEDULER_PATH, SCHEDULER, call, media_type)


def scheduler_call(master: str, stream: EventStream, call: dict[str, Any], media_type: MediaType) -> tuple[int, bytes]:
    status, _, body = post(master, SCHEDULER_PATH, encode_call(SCHEDULER, call, media_type),
                           {"Content-Type": media_type, "Mesos-Stream-Id": stream.stream_id or ""})
    return status, body


def run_command_task(master: str, media_type: MediaType, timeout: float = 60.0,
                     before_teardown: Callable[[TaskRun], None] | None = None, user: str = "root") -> TaskRun:
    """SUBSCRIBE, take an offer, LAUNCH one command task, ACKNOWLEDGE its updates until it finishes,
    RECONCILE, then (after `before_teardown`, while the framework is still registered) TEARDOWN."""
    stream = subscribe(master, media_type, user=user)
    assert stream.status == 200, f"SUBSCRIBE answered {stream.status}"
    subscribed, record = stream.next_of("SUBSCRIBED", timeout)
    run = TaskRun(subscribed.subscribed.framework_id.value, stream.stream_id or "")
    run.add("SUBSCRIBED", record)
    try:
        _, record = stream.next_of("HEARTBEAT", timeout)
        run.add("HEARTBEAT", record)
        offers, record = stream.next_of("OFFERS", timeout)
        run.add("OFFERS", record)
        offer = offers.offers.offers[0]
        task = _task(offer)
        accept = {"type": "ACCEPT", "framework_id": {"value": run.framework_id},
                  "accept": {"offer_ids": [{"value": offer.id.value}],
                             "operations": [{"type": "LAUNCH", "launch": {"task_infos": [task]}}],
                             "filters": {"refuse_seconds": 1.0}}}
        run.answers["ACCEPT"] = scheduler_call(master, stream, accept, media_type)
        _follow_updates(master, stream, run, media_type, timeout)
        run.answers["RECONCILE"] = scheduler_call(
            master, stream, {"type": "RECONCILE", "framework_id": {"value": run.framework_id},
                             "reconcile": {"tasks": [{"task_id": task["task_id"], "agent_id": task["agent_id"]}]}},
            media_type)
        _, record = stream.next_of("UPDATE", timeout)
        run.add("UPDATE reconciliation", record)
        if before_teardown is not None:
            before_teardown(run)
    finally:
        run.answers["TEARDOWN"] = scheduler_call(
            master, stream, {"type": "TEARDOWN", "framework_id": {"value": run.framework_id}}, media_type)
        stream.close()
    return run


def _task(offer: Any) -> dict[str, Any]:
    """A 0.1-cpu, 32 MB command task on the offer's agent, with the offer's allocation_info."""
    def scalar(name: str, value: float) -> dict[str, Any]:
        resource = {"name": name, "type": "SCALAR", "scalar": {"value": value}}
        allocated = next((r for r in offer.resources if r.name == name and r.HasField("allocation_info")), None)
        if allocated is not None:
            resource["allocation_info"] = {"role": allocated.allocation_info.role}
        return resource

    return {"name": "compat-task", "task_id": {"value": f"compat-{uuid.uuid4().hex[:8]}"},
            "agent_id": {"value": offer.agent_id.value},
            "resources": [scalar("cpus", 0.1), scalar("mem", 32.0)],
            "command": {"value": "echo compat", "shell": True},
            "labels": {"labels": [{"key": "suite", "value": "mesos-compat"}]},
            "kill_policy": {"grace_period": {"nanoseconds": 2_000_000_000}}}


def _follow_updates(master: str, stream: EventStream, run: TaskRun, media_type: MediaType, timeout: float) -> None:
    terminal = {"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED"}
    while True:
        update, record = stream.next_of("UPDATE", timeout)
        status = update.update.status
        state = status.DESCRIPTOR.fields_by_name["state"].enum_type.values_by_number[status.state].name
        run.add(f"UPDATE {state}", record)
        if status.HasField("uuid"):
            ack = {"type": "ACKNOWLEDGE", "framework_id": {"value": run.framework_id},
                   "acknowledge": {"agent_id": {"value": status.agent_id.value},
                                   "task_id": {"value": status.task_id.value},
                                   "uuid": base64.b64encode(status.uuid).decode()}}
            run.answers[f"ACKNOWLEDGE {state}"] = scheduler_call(master, stream, ack, media_type)
        if state in terminal:
            return


READ_ONLY_MASTER_CALLS = ("GET_HEALTH", "GET_FLAGS", "GET_VERSION", "GET_METRICS", "GET_LOGGING_LEVEL",
                          "GET_STATE", "GET_AGENTS", "GET_FRAMEWORKS", "GET_EXECUTORS", "GET_TASKS",
                          "GET_ROLES", "GET_MASTER", "GET_OPERATIONS", "GET_QUOTA",
                          "GET_MAINTENANCE_STATUS", "GET_MAINTENANCE_SCHEDULE")


def operator_body(api: codec.Api, kind: str) -> dict[str, Any]:
    """A read-only operator Call; the ones whose payload Mesos requires get an empty one."""
    call: dict[str, Any] = {"type": kind}
    if kind.lower() in api.call.DESCRIPTOR.fields_by_name:
        call[kind.lower()] = {}
    return call


def both_formats(address: str, api: codec.Api, kind: str) -> tuple[bytes, bytes]:
    """The same read-only call answered in protobuf and in JSON, back to back: (protobuf, json)."""
    answers = []
    for media_type in (MediaType.PROTOBUF, MediaType.JSON):
        status, headers, body = post(address, "/api/v1", encode_call(api, operator_body(api, kind), media_type),
                                     {"Content-Type": media_type, "Accept": media_type})
        assert status == 200, f"{kind} in {media_type} answered {status}: {body[:300]!r}"
        assert headers.get("Content-Type") == media_type
        answers.append(body)
    return answers[0], answers[1]


