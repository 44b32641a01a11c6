"""The master's read-only endpoints in Mesos's JSON shapes: /state, /state-summary, /slaves, /frameworks,
/tasks, /roles, /flags (each also under /master/).

Shapes are Mesos 1.12's, field for field (tests/mesos/test_endpoint_shapes.py
compares them with the answers recorded from a real master): resources as
flat `{"cpus": 4.0, "ports": "[31000-32000]"}` dicts, times as float
seconds, task `labels` as an array of `{key, value}`, a framework's `role`
or (MULTI_ROLE) `roles`. Where Mesos writes a field only when it is set
(`principal`, `labels`, `reregistered_time`, a task's `discovery`,
`container`, `user`), so do we. Nothing here changes the master.

`extras=True` adds what the web UI shows beyond Mesos's shape: a task's last
`reason` and `message`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.fields import build_info, mesos_duration
from scylla_singa.mesos.api.proto import mesos_pb2
from scylla_singa.mesos.api.protocol import AGENT_CAPABILITIES
from scylla_singa.mesos.api.resources import Resources, attributes_dict

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import AgentRec, FrameworkRec, TaskRec

# The per-state counters /state-summary writes, in Mesos's order.
SUMMARY_STATES = ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_FINISHED", "TASK_KILLED",
                  "TASK_FAILED", "TASK_LOST", "TASK_ERROR", "TASK_UNREACHABLE")


def total(items) -> Resources:
    out = Resources()
    for r in items:
        out = out + r
    return out


# ---- tasks -------------------------------------------------------------

def container_json(container: dict[str, Any]) -> dict[str, Any]:
    """A ContainerInfo as Mesos writes it: with the fields that have defaults (privileged, force_pull_image)."""
    try:
        return codec.to_dict(codec.message_from_dict(mesos_pb2.ContainerInfo, container), defaults=True)
    except ValueError:
        return container


def status_json(status: dict[str, Any]) -> dict[str, Any]:
    """One entry of a task's `statuses` in the v0 shape: state, timestamp and what Mesos adds when set."""
    out = {"state": status["state"], "timestamp": status.get("timestamp", 0.0)}
    for key in ("labels", "container_status", "healthy"):
        if key in status:
            out[key] = status[key]["labels"] if key == "labels" else status[key]
    return out


def task_json(m: Master, t: TaskRec, extras: bool = False) -> dict[str, Any]:
    info = t.info
    out: dict[str, Any] = {
        "id": t.task_id, "name": info.get("name", ""), "framework_id": t.framework_id,
        "executor_id": t.executor_id, "slave_id": t.agent_id, "state": t.state,
        "resources": t.resources.to_dict(), "role": t.role, "statuses": [status_json(s) for s in t.statuses]}
    if "labels" in info:
        out["labels"] = list((info["labels"] or {}).get("labels") or [])
    for key in ("discovery",):
        if key in info:
            out[key] = info[key]
    if "container" in info:
        out["container"] = container_json(info["container"])
    user = (info.get("command") or {}).get("user")
    if user:
        out["user"] = user
    if extras and t.status:
        for key in ("reason", "message"):
            if t.status.get(key):
                out[key] = t.status[key]
    return out


# ---- agents ------------------------------------------------------------

def agent_json(m: Master, a: AgentRec) -> dict[str, Any]:
    """An agent in /state and /slaves."""
    used = a.used()
    offered = total(m.offers[o].resources for o in a.offers if o in m.offers)
    out = {"id": a.id, "hostname": a.hostname, "port": a.port, "attributes": attributes_dict(a.attributes),
           "pid": a.pid, "registered_time": a.registered_time}
    if a.reregistered_time is not None:
        out["reregistered_time"] = a.reregistered_time
    out.update({"resources": a.total.to_dict(), "used_resources": used.to_dict(),
                "offered_resources": offered.to_dict(),
                "reserved_resources": {role: r.to_dict() for role, r in a.total.by_role().items()},
                "unreserved_resources": a.total.unreserved().to_dict(), "active": a.active,
                "deactivated": not a.healthy or a.operator_deactivated,
                "version": a.version, "capabilities": list(AGENT_CAPABILITIES)})
    return out


def agent_full_json(m: Master, a: AgentRec) -> dict[str, Any]:
    """An agent in /slaves: the /state form plus the `*_full` Resource lists."""
    out = agent_json(m, a)
    used = a.used()
    offered = total(m.offers[o].resources for o in a.offers if o in m.offers)
    out.update({"reserved_resources_full": {role: r.to_json() for role, r in a.total.by_role().items()},
                "unreserved_resources_full": a.total.unreserved().to_json(),
                "used_resources_full": used.to_json(allocation_role="*"),
                "offered_resources_full": offered.to_json(allocation_role="*")})
    return out


# ---- frameworks ----------------------------------------------------------

def offer_json(m: Master, offer_id: str) -> dict[str, Any]:
    o = m.offers[offer_id]
    fw = m.frameworks.get(o.framework_id)
    return {"id": o.id, "framework_id": o.framework_id, "allocation_info": {"role": fw.role if fw else "*"},
            "slave_id": o.agent_id, "resources": o.resources.to_dict()}


def framework_json(m: Master, f: FrameworkRec, extras: bool = False) -> dict[str, Any]:
    """A framework in /state and /frameworks."""
    used = total(t.resources for t in f.tasks.values())
    offers = [o for o in f.offers if o in m.offers]
    offered = total(m.offers[o].resources for o in offers)
    info = f.info
    out: dict[str, Any] = {
        "id": f.id, "name": info.get("name", ""), "used_resources": used.to_dict(),
        "offered_resources": offered.to_dict(), "capabilities": [c.get("type") for c in info.get("capabilities") or []],
        "hostname": info.get("hostname", ""), "webui_url": info.get("webui_url", ""), "active": f.active,
        "connected": f.connected, "recovered": f.lifecycle.state == "RECOVERED", "user": info.get("user", "")}
    if f.principal or info.get("principal"):
        out["principal"] = f.principal or info["principal"]
    out.update({"failover_timeout": f.failover_timeout, "checkpoint": bool(info.get("checkpoint", False)),
                "registered_time": f.registered_time, "unregistered_time": f.unregistered_time,
                "resources": (used + offered).to_dict()})
    if f.reregistered_time is not None:
        out["reregistered_time"] = f.reregistered_time
    if f.has_capability("MULTI_ROLE"):
        out["roles"] = list(info.get("roles") or [])
    else:
        out["role"] = f.role
    if "labels" in info:
        out["labels"] = list((info["labels"] or {}).get("labels") or [])
    out.update({"tasks": [task_json(m, t, extras) for t in f.tasks.values()], "unreachable_tasks": [],
                "completed_tasks": [task_json(m, t, extras) for t in f.completed],
                "offers": [offer_json(m, o) for o in offers],
                "executors": [executor_json(f, e) for e in f.executors.values()], "offer_constraints": {}})
    return out


def executor_json(f: FrameworkRec, executor: dict[str, Any]) -> dict[str, Any]:
    """A custom executor the framework runs, as /state lists it (`slave_id` beside its ExecutorInfo)."""
    info = executor["info"]
    out = {"executor_id": (info.get("executor_id") or {}).get("value", ""), "name": info.get("name", ""),
           "framework_id": f.id, "command": info.get("command") or {},
           "resources": Resources.from_json(info.get("resources")).to_dict(), "slave_id": executor["agent_id"]}
    if info.get("type"):
        out["type"] = info["type"]
    return out


# ---- whole answers ------------------------------------------------------

def build_fields() -> dict[str, Any]:
    """/state's first fields, in Mesos's order: the version, then the build."""
    info = build_info()
    return {k: info[k] for k in ("version", "git_sha", "git_branch", "git_tag", "build_date", "build_time",
                                 "build_user")}


def leader_json(m: Master) -> tuple[str, dict[str, Any] | None]:
    """(`leader` pid, `leader_info`) as this master knows them (no info about another leader)."""
    info = m.master_info()
    if m.leader_address is None:
        return info["pid"], {k: info[k] for k in ("id", "pid", "port", "hostname")}
    return (f"master@{m.leader_address}" if m.leader_address else ""), None


def master_state_json(m: Master, extras: bool = False) -> dict[str, Any]:
    """Mesos's /master/state."""
    info = m.master_info()
    agents = list(m.agent_registry.agents.values())
    leader, leader_info = leader_json(m)
    out: dict[str, Any] = build_fields()
    out["start_time"] = m.start_time
    if m.elected_time is not None:
        out["elected_time"] = m.elected_time
    out.update({"id": m.id, "pid": info["pid"], "hostname": info["hostname"], "capabilities": [],
                "activated_slaves": float(sum(1 for a in agents if a.active)),
                "deactivated_slaves": float(sum(1 for a in agents if not a.active)),
                "unreachable_slaves": 0.0})
    if leader:
        out["leader"] = leader
    if leader_info is not None:
        out["leader_info"] = leader_info
    out.update({"flags": master_flags(m), "slaves": [agent_json(m, a) for a in agents], "recovered_slaves": [],
                "frameworks": [framework_json(m, f, extras) for f in m.frameworks.values()],
                "completed_frameworks": [framework_json(m, f, extras) for f in m.completed_frameworks],
                "orphan_tasks": [], "unregistered_frameworks": []})
    return out


def slaves_json(m: Master) -> dict[str, Any]:
    """Mesos's /master/slaves."""
    return {"slaves": [agent_full_json(m, a) for a in m.agent_registry.agents.values()], "recovered_slaves": []}


def frameworks_json(m: Master, framework_id: str | None = None) -> dict[str, Any]:
    """Mesos's /master/frameworks (optionally `?framework_id=`)."""
    def chosen(frameworks) -> list[dict[str, Any]]:
        return [framework_json(m, f) for f in frameworks if framework_id in (None, f.id)]
    return {"frameworks": chosen(m.frameworks.values()), "completed_frameworks": chosen(m.completed_frameworks),
            "unregistered_frameworks": []}


def tasks_json(m: Master, limit: int | None = 100, offset: int = 0, ascending: bool = False,
               framework_id: str | None = None, task_id: str | None = None) -> dict[str, Any]:
    """Mesos's /master/tasks: active then completed tasks of every framework, ordered by their first
    status's time (newest first unless `ascending`), then `offset` and `limit` (None: all)."""
    tasks = [t for f in list(m.frameworks.values()) + m.completed_frameworks
             if framework_id in (None, f.id) for t in list(f.tasks.values()) + list(f.completed)
             if task_id in (None, t.task_id)]
    tasks.sort(key=lambda t: (t.statuses[0].get("timestamp", 0.0) if t.statuses else 0.0, t.task_id),
               reverse=not ascending)
    chosen = tasks[offset:] if limit is None else tasks[offset:offset + limit]
    return {"tasks": [task_json(m, t) for t in chosen]}


def _counts(tasks) -> dict[str, int]:
    out = dict.fromkeys(SUMMARY_STATES, 0)
    for t in tasks:
        if t.state in out:
            out[t.state] += 1
    return out


def state_summary_json(m: Master) -> dict[str, Any]:
    """Mesos's /master/state-summary: agents and frameworks with task counts per state, and who runs where."""
    frameworks = list(m.frameworks.values())
    every = [(f, t) for f in frameworks for t in list(f.tasks.values()) + list(f.completed)]
    slaves = []
    for a in m.agent_registry.agents.values():
        mine = [(f, t) for f, t in every if t.agent_id == a.id]
        slaves.append({**agent_json(m, a), **_counts(t for _, t in mine),
                       "framework_ids": sorted({f.id for f, _ in mine})})
    summaries = []
    for f in frameworks:
        full = framework_json(m, f)
        keep = ("id", "name", "used_resources", "offered_resources", "capabilities", "hostname", "webui_url",
                "active", "connected", "recovered")
        tasks = [t for g, t in every if g is f]
        summaries.append({**{k: full[k] for k in keep}, **_counts(tasks),
                          "slave_ids": sorted({t.agent_id for t in tasks})})
    return {"hostname": m.master_info()["hostname"], "slaves": slaves, "frameworks": summaries}


def roles_in_use(m: Master) -> list[tuple[str, float, list[Any]]]:
    """(name, weight, frameworks) of every role with a framework, a weight, a quota or a reservation, by name:
    the roles that
    /master/roles and the operator API's GET_ROLES list."""
    weights = dict(m.cfg.role_weights)
    reserved = {ancestor for a in m.agent_registry.agents.values() for role in a.total.reserved_roles()
                for ancestor in _with_ancestors(role)}   # a nested role's reservation shows its parents, as in Mesos
    names = sorted({f.role for f in m.frameworks.values()} | set(weights) | set(m.quotas) | reserved)
    return [(name, float(weights.get(name, 1.0)), [f for f in m.frameworks.values() if f.role == name])
            for name in names]


def _with_ancestors(role: str) -> list[str]:
    """`a/b/c`, `a/b` and `a`."""
    parts = role.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def roles_json(m: Master) -> dict[str, Any]:
    """Mesos's /master/roles: every role with a framework, a weight or a quota; quantities, not Resource lists."""
    out = []
    for name, weight, fws in roles_in_use(m):
        allocated = total(t.resources for f in fws for t in f.tasks.values())
        offered = total(m.offers[o].resources for f in fws for o in f.offers if o in m.offers)
        quota = m.quotas.get(name)
        reserved = total(a.total.reserved_under(name) for a in m.agent_registry.agents.values())
        # Mesos counts a role's reservations as consumed quota, used or not, and its unreserved allocation.
        consumed = reserved + allocated.unreserved()
        out.append({"name": name, "weight": weight,
                    "quota": {"role": name, "guarantee": dict(quota.guarantees) if quota else {},
                              "limit": dict(quota.limits) if quota else {}, "consumed": consumed.quantities()},
                    "resources": (allocated + offered).quantities(), "allocated": allocated.quantities(),
                    "offered": offered.quantities(), "reserved": reserved.quantities(),
                    "frameworks": [f.id for f in fws]})
    return {"roles": out}


def master_flags(m: Master) -> dict[str, str]:
    """The master's flags under Mesos's names where one means the same, else ours; all as strings."""
    cfg = m.cfg
    host = cfg.advertise_host or cfg.host
    flags = {
        "agent_ping_timeout": mesos_duration(cfg.agent_ping_interval),
        "agent_reregister_timeout": mesos_duration(cfg.agent_reregister_timeout),
        "allocation_interval": mesos_duration(cfg.allocation_interval),
        "allocator": cfg.allocator,
        "authenticate_frameworks": str(cfg.credentials is not None).lower(),
        "authenticate_http_frameworks": str(cfg.credentials is not None).lower(),
        "authenticate_agents": str(cfg.credentials is not None).lower(),
        "authenticate_http_readwrite": str(cfg.credentials is not None).lower(),
        "authenticate_http_readonly": str(cfg.credentials is not None and cfg.authenticate_readonly).lower(),
        "framework_sorter": cfg.allocator, "role_sorter": cfg.allocator,
        "hostname": host, "ip": cfg.host, "port": str(cfg.port),
        "max_agent_ping_timeouts": str(cfg.agent_ping_misses),
        "max_completed_frameworks": "50",
        "max_completed_tasks_per_framework": str(cfg.max_completed_tasks),
        "min_allocatable_resources": "cpus:0.01|mem:32",
        "work_dir": str(cfg.work_dir or ""),
        # ours (no Mesos flag has their meaning)
        "default_kill_grace_period": mesos_duration(cfg.default_kill_grace),
        "heartbeat_interval": mesos_duration(cfg.heartbeat_interval),
        "recovered_framework_timeout": mesos_duration(cfg.recovered_framework_timeout),
    }
    if cfg.offer_timeout is not None:
        flags["offer_timeout"] = mesos_duration(cfg.offer_timeout)
    if cfg.role_weights:
        flags["weights"] = ",".join(f"{r}={w:g}" for r, w in sorted(cfg.role_weights.items()))
    return dict(sorted(flags.items()))
