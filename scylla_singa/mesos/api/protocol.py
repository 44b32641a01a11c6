"""Messages between agents and the master (our own protocol) and Mesos status/event shapes.

Agents talk to the master over one WebSocket (`GET /api/v1/agent`) of JSON
text messages; a simulated fleet multiplexes thousands of agents on one
socket, so every message names its `agent_id` (or, before registration, a
`ref` the agent chose).

agent -> master: REGISTER {ref, agent}, STATUS {agent_id, framework_id, status}, PONG,
                 AGENT_HEALTH {agent_id, healthy, message} (its containerizer stopped/started working)
master -> agent: REGISTERED {ref, agent_id, ping_timeout_s}, REREGISTER_REFUSED {ref, agent_id, message},
                 RUN_TASK {agent_id, framework_id, framework, task}, KILL_TASK {agent_id,
                 framework_id, task_id, grace_s}, ACK {agent_id, framework_id, task_id, uuid},
                 SHUTDOWN_FRAMEWORK {agent_id, framework_id}, PING, NOT_LEADER {leader}

`agent` in REGISTER: {agent_id? (re-registration), hostname, port, resources,
attributes, tasks: [{framework_id, framework, task, state, status?}], healthy? (false
when unhealthy), health?}. `ping_timeout_s`: an agent that hears nothing from
the master for that long looks for the leader again (as a Mesos agent does).
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any

AGENT_WS_PATH = "/api/v1/agent"
# What an agent of ours can do, in AgentInfo.Capability names and in Mesos's order;
# AGENT_OPERATION_FEEDBACK is the master's operation feedback (master/operation_feedback.py).
AGENT_CAPABILITIES = ("MULTI_ROLE", "HIERARCHICAL_ROLE", "RESIZE_VOLUME", "AGENT_OPERATION_FEEDBACK")
SCHEDULER_PATH = "/api/v1/scheduler"


def new_uuid_b64() -> str:
    """A fresh status-update uuid as Mesos sends it in JSON (base64 of 16 bytes)."""
    return base64.b64encode(uuid.uuid4().bytes).decode()


def make_status(task_id: str, state: str, *, agent_id: str | None = None, source: str = "SOURCE_EXECUTOR",
                reason: str | None = None, message: str | None = None, uuid_b64: str | None = None,
                container_status: dict[str, Any] | None = None, executor_id: str | None = None,
                timestamp: float | None = None) -> dict[str, Any]:
    """A Mesos TaskStatus in JSON; only fields that are set appear."""
    status: dict[str, Any] = {"task_id": {"value": task_id}, "state": state, "source": source,
                              "timestamp": timestamp if timestamp is not None else time.time()}
    if agent_id:
        status["agent_id"] = {"value": agent_id}
    if executor_id:
        status["executor_id"] = {"value": executor_id}
    if reason:
        status["reason"] = reason
    if message:
        status["message"] = message
    if uuid_b64:
        status["uuid"] = uuid_b64
    if container_status:
        status["container_status"] = container_status
    return status


def update_event(status: dict[str, Any]) -> dict[str, Any]:
    return {"type": "UPDATE", "update": {"status": status}}


def container_status(container_id: str, ip: str | None, network: str | None) -> dict[str, Any]:
    """TASK_RUNNING's container_status: the container id and its IP on its network."""
    out: dict[str, Any] = {"container_id": {"value": container_id}}
    if ip:
        info: dict[str, Any] = {"ip_addresses": [{"protocol": "IPv4", "ip_address": ip}]}
        if network:
            info["name"] = network
        out["network_infos"] = [info]
    return out
