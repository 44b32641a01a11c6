"""The master's state as the v1 operator API's messages (master.proto Response.*), in the dict form.

Why apart from operator_views: the v1 API speaks protobuf messages (Task,
GetAgents.Agent, GetFrameworks.Framework, ...), the v0 endpoints flat JSON;
one room each. These dicts are turned into JSON or protobuf by
mesos/api/codec.py; the operator events (TASK_ADDED, AGENT_ADDED, ...) carry
the same shapes. Times are TimeInfo ({"nanoseconds": int}); resources are
Resource lists, with `allocation_info` on what is allocated or offered, as
Mesos 1.12 writes them. Nothing here changes the master.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.fields import build_info
from scylla_singa.mesos.api.protocol import AGENT_CAPABILITIES
from .operator_views import master_flags, roles_in_use, total

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import AgentRec, FrameworkRec, TaskRec

JsonDict = dict[str, Any]


def time_info(seconds: float) -> JsonDict:
    return {"nanoseconds": int(seconds * 1e9)}


def _allocated(resources: list[JsonDict] | None, role: str) -> list[JsonDict]:
    """A TaskInfo's resources as Mesos keeps them once allocated: with `allocation_info` (role) set."""
    out = []
    for r in resources or ():
        if isinstance(r, dict):
            out.append(r if "allocation_info" in r else {**r, "allocation_info": {"role": role}})
    return out


def task(t: TaskRec) -> JsonDict:
    """A Task (mesos.proto) from the master's record."""
    info = t.info
    out: JsonDict = {"name": info.get("name", ""), "task_id": {"value": t.task_id},
                     "framework_id": {"value": t.framework_id}, "agent_id": {"value": t.agent_id},
                     "state": t.state, "resources": _allocated(info.get("resources"), t.role)}
    if t.statuses:
        out["statuses"] = list(t.statuses)
    if t.executor_id:
        out["executor_id"] = {"value": t.executor_id}
    if t.status is not None:
        out["status_update_state"] = t.status["state"]
        if t.status.get("uuid"):
            out["status_update_uuid"] = t.status["uuid"]
    for key in ("labels", "discovery", "container", "health_check", "kill_policy"):
        if key in info:
            out[key] = info[key]
    user = (info.get("command") or {}).get("user")
    if user:
        out["user"] = user
    return out


def get_tasks(m: Master) -> JsonDict:
    frameworks = list(m.frameworks.values())
    return {"tasks": [task(t) for f in frameworks for t in f.tasks.values()], "unreachable_tasks": [],
            "completed_tasks": [task(t) for f in frameworks + m.completed_frameworks for t in f.completed]}


def agent(m: Master, a: AgentRec) -> JsonDict:
    """A GetAgents.Agent."""
    used = a.used()
    offered = total(m.offers[o].resources for o in a.offers if o in m.offers)
    # `checkpoint` is v0 SlaveInfo's field 7, which real masters still send in AgentInfo: it shows in
    # JSON (codec.encode_as_mesos keeps it) and not in protobuf, where v1 AgentInfo has no such field.
    info: JsonDict = {"hostname": a.hostname, "port": a.port,
                      "resources": [{k: v for k, v in r.items() if k != "role"}
                                    for r in a.total.static_form().to_json()],
                      "id": {"value": a.id}, "checkpoint": True}
    if a.attributes:
        info["attributes"] = a.attributes
    out: JsonDict = {"agent_info": info, "active": a.active, "deactivated": not a.healthy or a.operator_deactivated,
                     "version": a.version,
                     "pid": a.pid, "registered_time": time_info(a.registered_time)}
    if a.reregistered_time is not None:
        out["reregistered_time"] = time_info(a.reregistered_time)
    out["total_resources"] = a.total.to_json()
    if used:
        out["allocated_resources"] = used.to_json(allocation_role="*")
    if offered:
        out["offered_resources"] = offered.to_json(allocation_role="*")
    out["capabilities"] = [{"type": c} for c in AGENT_CAPABILITIES]
    return out


def get_agents(m: Master) -> JsonDict:
    return {"agents": [agent(m, a) for a in m.agent_registry.agents.values()], "recovered_agents": []}


def framework_event(f: FrameworkRec) -> JsonDict:
    """A GetFrameworks.Framework as FRAMEWORK_ADDED/UPDATED carry it: registration only, no offers or
    resources, and `unregistered_time` always (as Mesos 1.12 sent them)."""
    return {"framework_info": f.info, "active": f.active, "connected": f.connected,
            "recovered": f.lifecycle.state == "RECOVERED",
            "registered_time": time_info(f.registered_time if f.lifecycle.state != "RECOVERED" else 0.0),
            "reregistered_time": time_info(f.reregistered_time or (f.registered_time
                                                                   if f.lifecycle.state != "RECOVERED" else 0.0)),
            "unregistered_time": time_info(f.unregistered_time)}


def framework(m: Master, f: FrameworkRec) -> JsonDict:
    """A GetFrameworks.Framework."""
    used = total(t.resources for t in f.tasks.values())
    offers = [m.offers[o] for o in f.offers if o in m.offers]
    offered = total(o.resources for o in offers)
    role = f.allocation_role or f.role
    out: JsonDict = {"framework_info": f.info, "active": f.active, "connected": f.connected,
                     "recovered": f.lifecycle.state == "RECOVERED", "registered_time": time_info(f.registered_time),
                     "reregistered_time": time_info(f.reregistered_time or f.registered_time)}
    if f.unregistered_time:
        out["unregistered_time"] = time_info(f.unregistered_time)
    if offers:
        out["offers"] = [offer(o.message, role) for o in offers if o.message]
    if used:
        out["allocated_resources"] = used.to_json(allocation_role=role)
    if offered:
        out["offered_resources"] = offered.to_json(allocation_role=role)
    out["offer_constraints"] = {}
    return out


def offer(message: JsonDict, role: str) -> JsonDict:
    """An outstanding Offer as the operator API lists it: allocated to a role (Mesos leaves allocation_info
    out of the OFFERS event only for frameworks that are not MULTI_ROLE)."""
    return {**message, "allocation_info": {"role": role},
            "resources": _allocated([{k: v for k, v in r.items() if k != "allocation_info"}
                                     for r in message.get("resources") or ()], role)}


def get_frameworks(m: Master) -> JsonDict:
    return {"frameworks": [framework(m, f) for f in m.frameworks.values()],
            "completed_frameworks": [framework(m, f) for f in m.completed_frameworks]}


def get_executors(m: Master) -> JsonDict:
    return {"executors": [{"executor_info": e["info"], "agent_id": {"value": e["agent_id"]}}
                          for f in m.frameworks.values() for e in f.executors.values()]}


def get_state(m: Master) -> JsonDict:
    return {"get_tasks": get_tasks(m), "get_executors": get_executors(m), "get_frameworks": get_frameworks(m),
            "get_agents": get_agents(m)}


def get_roles(m: Master) -> JsonDict:
    roles = []
    for name, weight, fws in roles_in_use(m):
        held = total(t.resources for f in fws for t in f.tasks.values())
        roles.append({"name": name, "weight": weight,
                      "frameworks": [{"value": f.id} for f in fws],
                      "resources": held.to_json(allocation_role=name)})
    return {"roles": roles}


def get_master(m: Master) -> JsonDict:
    out: JsonDict = {"master_info": m.master_info(), "start_time": m.start_time}
    if m.elected_time is not None:
        out["elected_time"] = m.elected_time
    return out


def get_version() -> JsonDict:
    return {"version_info": dict(build_info())}


def get_flags(m: Master) -> JsonDict:
    return {"flags": [{"name": k, "value": v} for k, v in master_flags(m).items()]}


def metric_list(snapshot: dict[str, float]) -> JsonDict:
    return {"metrics": [{"name": k, "value": v} for k, v in snapshot.items()]}
