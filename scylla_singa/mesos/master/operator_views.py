"""Operator views of the master: `/master/state` (Mesos's shape) and `/metrics/snapshot`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.fields import VERSION
from scylla_singa.mesos.api.resources import Resources, attributes_dict
from scylla_singa.mesos.api.task_states import ACTIVE_TASK_STATES, ENDED_TASK_COUNTERS, TERMINAL_TASK_STATES

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import AgentRec, FrameworkRec, TaskRec


def task_json(t: TaskRec) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": t.task_id, "name": t.info.get("name", ""), "framework_id": t.framework_id,
        "executor_id": "", "slave_id": t.agent_id, "agent_id": t.agent_id, "state": t.state,
        "resources": t.resources.to_dict(), "statuses": list(t.statuses)}
    for key in ("labels", "container", "discovery"):
        if key in t.info:
            out[key] = t.info[key]
    if t.status and t.status.get("message"):
        out["message"] = t.status["message"]
    if t.status and t.status.get("reason"):
        out["reason"] = t.status["reason"]
    return out


def _sum(items) -> Resources:
    total = Resources()
    for r in items:
        total = total + r
    return total


def agent_json(m: Master, a: AgentRec) -> dict[str, Any]:
    used = _sum(t.resources for t in a.tasks.values())
    offered = _sum(m.offers[o].resources for o in a.offers if o in m.offers)
    return {"id": a.id, "hostname": a.hostname, "port": a.port, "pid": f"slave(1)@{a.ip}:{a.port}",
            "attributes": attributes_dict(a.attributes), "resources": a.total.to_dict(),
            "used_resources": used.to_dict(), "offered_resources": offered.to_dict(),
            "unreserved_resources": a.total.to_dict(), "reserved_resources": {},
            "active": a.active, "deactivated": not a.healthy, "registered_time": a.registered_time,
            "version": VERSION,
            "capabilities": []}


def framework_json(m: Master, f: FrameworkRec) -> dict[str, Any]:
    used = _sum(t.resources for t in f.tasks.values())
    offers = [m.offers[o] for o in f.offers if o in m.offers]
    return {
        "id": f.id, "name": f.info.get("name", ""), "user": f.info.get("user", ""), "role": f.role,
        "hostname": f.info.get("hostname", ""), "principal": f.principal or f.info.get("principal"),
        "webui_url": f.info.get("webui_url", ""), "capabilities": [c.get("type") for c in
                                                                    f.info.get("capabilities") or []],
        "active": f.connected, "connected": f.connected, "recovered": f.lifecycle.state == "RECOVERED",
        "failover_timeout": f.failover_timeout, "registered_time": f.registered_time,
        "resources": (used + _sum(o.resources for o in offers)).to_dict(), "used_resources": used.to_dict(),
        "offered_resources": _sum(o.resources for o in offers).to_dict(),
        "tasks": [task_json(t) for t in f.tasks.values()],
        "completed_tasks": [task_json(t) for t in f.completed],
        "offers": [{"id": o.id, "framework_id": o.framework_id, "slave_id": o.agent_id,
                    "resources": o.resources.to_dict()} for o in offers],
        "executors": []}


def master_state_json(m: Master) -> dict[str, Any]:
    """Mesos's /master/state: slaves, frameworks (with tasks, offers, completed tasks), leader."""
    host = m.cfg.advertise_host or m.cfg.host
    leader = m.leader_address or f"{host}:{m.cfg.port}"
    return {
        "version": VERSION, "id": m.id, "pid": f"master@{host}:{m.cfg.port}", "hostname": host,
        "start_time": m.start_time, "elected_time": m.start_time if m.leader_address is None else None,
        "leader": f"master@{leader}", "leader_info": m.master_info() if m.leader_address is None else None,
        "activated_slaves": sum(1 for a in m.agent_registry.agents.values() if a.active),
        "deactivated_slaves": sum(1 for a in m.agent_registry.agents.values() if not a.active),
        "slaves": [agent_json(m, a) for a in m.agent_registry.agents.values()],
        "frameworks": [framework_json(m, f) for f in m.frameworks.values()],
        "completed_frameworks": [framework_json(m, f) for f in m.completed_frameworks],
        "orphan_tasks": [], "unregistered_frameworks": [],
        "flags": {"allocator": m.cfg.allocator, "allocation_interval": f"{m.cfg.allocation_interval}secs",
                  "offer_timeout": str(m.cfg.offer_timeout), "work_dir": str(m.cfg.work_dir or "")},
    }


def metrics_json(m: Master) -> dict[str, float]:
    """Flat `/metrics/snapshot` keys as Mesos names them (master/..., allocator/mesos/...)."""
    out: dict[str, float] = {}
    total = _sum(a.total for a in m.agent_registry.agents.values() if a.active)
    used = _sum(t.resources for a in m.agent_registry.agents.values() for t in a.tasks.values())
    offered = _sum(o.resources for o in m.offers.values())
    for name in ("cpus", "mem", "disk", "gpus"):
        t, u = total.scalar(name), used.scalar(name)
        out[f"master/{name}_total"] = t
        out[f"master/{name}_used"] = u
        out[f"master/{name}_offered"] = offered.scalar(name)
        out[f"master/{name}_percent"] = u / t if t else 0.0
    states: dict[str, int] = {s: 0 for s in ACTIVE_TASK_STATES}
    for f in m.frameworks.values():
        for t in f.tasks.values():
            if t.state not in TERMINAL_TASK_STATES:
                states[t.state] = states.get(t.state, 0) + 1
    for s, n in states.items():
        out[f"master/tasks_{s[5:].lower()}"] = float(n)
    for s in ENDED_TASK_COUNTERS:
        out[f"master/tasks_{s}"] = float(m.counters.get(f"master/tasks_{s}", 0))
    fws = list(m.frameworks.values())
    out["master/frameworks_active"] = float(sum(1 for f in fws if f.connected))
    out["master/frameworks_connected"] = out["master/frameworks_active"]
    out["master/frameworks_disconnected"] = float(sum(1 for f in fws if not f.connected))
    out["master/frameworks_inactive"] = out["master/frameworks_disconnected"]
    out["master/slaves_active"] = float(sum(1 for a in m.agent_registry.agents.values() if a.active))
    out["master/slaves_connected"] = out["master/slaves_active"]
    out["master/slaves_disconnected"] = float(sum(1 for a in m.agent_registry.agents.values() if not a.active))
    out["master/outstanding_offers"] = float(len(m.offers))
    out["master/elected"] = 1.0 if m.leader_address is None else 0.0
    out["master/uptime_secs"] = time.time() - m.start_time
    out["allocator/mesos/allocation_runs"] = float(m.allocation_runs)
    out["allocator/mesos/allocation_run_ms"] = m.last_allocation_s * 1000.0
    for key, n in m.counters.items():
        out.setdefault(key, float(n))
    return out
