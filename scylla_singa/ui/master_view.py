"""What the master's page and its `/metrics` show, computed from the operator endpoints' JSON.

Pure functions of `/master/state` (`state_json`) and `/metrics/snapshot`
(`metrics_json`) dicts, so they work on any Mesos-shaped state and are
tested with plain dicts:

    cluster_view(state, metrics, now, get_tasks) -> the page model `/ui/state` answers
    cluster_metrics(state, metrics)              -> Prometheus families for `/metrics`

A task's reason and message come from the operator API's GET_TASKS answer
(`get_tasks`), never from `/master/state`: Apache Mesos's `/master/state`
has neither, at the task level or in `statuses[]` (which hold only state,
timestamp and container status); GET_TASKS's `statuses[]` carry them, as
the scheduler's UPDATEs do.

Dominant shares are DRF's: a framework's allocation (resources its tasks
use plus resources offered to it, as Mesos's allocator counts them) over
the cluster's total, per scalar resource; the largest is the dominant one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

from scylla_singa.mesos.api.task_states import ACTIVE_TASK_STATES, ENDED_TASK_COUNTERS
from .prometheus import Metric

# Resources listed first, in this order; any other scalar an agent offers follows.
MAIN_RESOURCES = ("cpus", "mem", "disk", "gpus")
# A page with 10,000 agents is no use to a person and slow to poll: lists are capped, counts are not.
MAX_AGENTS = 200
MAX_TASKS = 200


def scalars(res: Mapping[str, Any] | None) -> dict[str, float]:
    """The scalar part of a flat `/master/state` resources dict (ranges and sets are strings there)."""
    return {k: float(v) for k, v in (res or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def resource_names(totals: Iterable[Mapping[str, float]]) -> list[str]:
    """Main resources first (even when zero, except gpus), then other scalars in name order."""
    seen: set[str] = set()
    for t in totals:
        seen.update(k for k, v in t.items() if v > 0)
    main = [r for r in MAIN_RESOURCES if r != "gpus" or "gpus" in seen]
    return main + sorted(seen - set(MAIN_RESOURCES))


def shares(allocation: Mapping[str, float], total: Mapping[str, float]) -> dict[str, float]:
    """allocation / total per scalar resource the cluster has."""
    return {r: allocation.get(r, 0.0) / t for r, t in total.items() if t > 0}


def dominant(share_by_resource: Mapping[str, float]) -> tuple[str | None, float]:
    """(resource, share) of the largest share; (None, 0.0) when nothing is allocated. Ties go to the earlier name."""
    best: tuple[str | None, float] = (None, 0.0)
    for r in sorted(share_by_resource):
        if share_by_resource[r] > best[1]:
            best = (r, share_by_resource[r])
    return best


def agent_address(slave: Mapping[str, Any]) -> str | None:
    """ "ip:port" of an agent's HTTP endpoints from its `pid` (slave(1)@ip:port); None when it serves none."""
    m = re.search(r"@([^:]+):(\d+)$", slave.get("pid", ""))
    if not m or m.group(2) == "0":
        return None
    return f"{m.group(1)}:{m.group(2)}"


def cluster_total(state: Mapping[str, Any]) -> dict[str, float]:
    """Scalar resources of the active agents, summed (what the allocator divides by)."""
    total: Counter[str] = Counter()
    for s in state.get("slaves", []):
        if s.get("active", True):
            total.update(scalars(s.get("resources")))
    return dict(total)


def _usage(names: list[str], total: Mapping[str, float], used: Mapping[str, float],
           offered: Mapping[str, float]) -> list[dict[str, Any]]:
    return [{"name": r, "total": total.get(r, 0.0), "used": used.get(r, 0.0), "offered": offered.get(r, 0.0)}
            for r in names]


def agent_rows(state: Mapping[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """One row per agent, reachable ones first, then by hostname."""
    tasks_on: Counter[str] = Counter(t.get("slave_id") for f in state.get("frameworks", [])
                                     for t in f.get("tasks", []))
    rows = []
    for s in state.get("slaves", []):
        rows.append({
            "id": s["id"], "hostname": s.get("hostname", s["id"]), "address": agent_address(s),
            "active": bool(s.get("active", True)), "attributes": dict(s.get("attributes") or {}),
            "resources": _usage(names, scalars(s.get("resources")), scalars(s.get("used_resources")),
                                scalars(s.get("offered_resources"))),
            "tasks": tasks_on.get(s["id"], 0), "registered_time": s.get("registered_time")})
    rows.sort(key=lambda a: (not a["active"], a["hostname"], a["id"]))
    return rows


def safe_url(url: Any) -> str:
    """A framework's web UI link only when it is http(s): the page must not carry `javascript:` links."""
    return url if isinstance(url, str) and re.match(r"https?://", url, re.IGNORECASE) else ""


def framework_rows(state: Mapping[str, Any], total: Mapping[str, float]) -> list[dict[str, Any]]:
    """Connected frameworks by dominant share (largest first), then disconnected ones."""
    rows = []
    for f in state.get("frameworks", []):
        alloc = scalars(f.get("resources"))
        by_resource = shares(alloc, total)
        resource, share = dominant(by_resource)
        states = Counter(t.get("state", "") for t in f.get("tasks", []))
        states.update(t.get("state", "") for t in f.get("completed_tasks", []))
        rows.append({
            "id": f["id"], "name": f.get("name", ""), "role": f.get("role", "*"), "user": f.get("user", ""),
            "active": bool(f.get("active", f.get("connected", True))), "webui_url": safe_url(f.get("webui_url")),
            "dominant_share": share, "dominant_resource": resource, "shares": by_resource,
            "used": scalars(f.get("used_resources")), "offered": scalars(f.get("offered_resources")),
            "offers": len(f.get("offers", [])), "tasks_by_state": dict(sorted(states.items())),
            "active_tasks": len(f.get("tasks", []))})
    rows.sort(key=lambda f: (not f["active"], -f["dominant_share"], f["name"], f["id"]))
    return rows


def natural_key(text: str) -> tuple:
    """Sorts "proc-2" before "proc-10"."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def log_link(agent_id: str, task_id: str, name: str) -> str:
    """The master-side log viewer of one task's sandbox file (stdout or stderr)."""
    return "/ui/log?" + urlencode({"agent": agent_id, "task": task_id, "file": name})


def status_details(get_tasks: Mapping[str, Any] | None) -> dict[tuple[str, str], dict[str, str]]:
    """(framework id, task id) -> the reason and message of the task's latest status, from an operator
    API GET_TASKS answer (`{"type": "GET_TASKS", "get_tasks": {"tasks": [...], ...}}`, v1 JSON)."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    body = (get_tasks or {}).get("get_tasks") or {}
    for group in ("tasks", "unreachable_tasks", "completed_tasks", "orphan_tasks"):
        for t in body.get(group) or []:
            statuses = t.get("statuses") or []
            last = statuses[-1] if statuses else {}
            key = ((t.get("framework_id") or {}).get("value", ""), (t.get("task_id") or {}).get("value", ""))
            out[key] = {"reason": last.get("reason", ""), "message": last.get("message", "")}
    return out


def _task_row(t: Mapping[str, Any], fw: Mapping[str, Any], agents: Mapping[str, Mapping[str, Any]],
              details: Mapping[tuple[str, str], Mapping[str, str]]) -> dict[str, Any]:
    agent_id = t.get("slave_id") or t.get("agent_id", "")
    agent = agents.get(agent_id, {})
    statuses = t.get("statuses") or []
    why = details.get((fw["id"], t["id"]), {})
    row = {"id": t["id"], "name": t.get("name", ""), "framework_id": fw["id"], "framework": fw.get("name", ""),
           "agent_id": agent_id, "hostname": agent.get("hostname", agent_id), "state": t.get("state", ""),
           "reason": why.get("reason", ""), "message": why.get("message", ""),
           "updated": statuses[-1].get("timestamp") if statuses else None,
           "active": t.get("state") in ACTIVE_TASK_STATES, "logs": None}
    if agent and agent_address(agent):
        row["logs"] = {name: log_link(agent_id, t["id"], name) for name in ("stdout", "stderr")}
    return row


def task_rows(state: Mapping[str, Any], limit: int = MAX_TASKS,
              get_tasks: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Active tasks first, by framework and id (a job's processes stay together), then completed ones,
    newest first; at most `limit`. Reasons and messages from `get_tasks` (see the module docstring)."""
    agents = {s["id"]: s for s in state.get("slaves", [])}
    details = status_details(get_tasks)
    rows = []
    for f in list(state.get("frameworks", [])) + list(state.get("completed_frameworks", [])):
        for t in list(f.get("tasks", [])) + list(f.get("completed_tasks", [])):
            rows.append(_task_row(t, f, agents, details))
    active = sorted((r for r in rows if r["active"]),
                    key=lambda r: (r["framework"], r["framework_id"], natural_key(r["id"])))
    ended = sorted((r for r in rows if not r["active"]), key=lambda r: (-(r["updated"] or 0.0), r["id"]))
    return (active + ended)[:limit]


def _task_counts(metrics: Mapping[str, float]) -> dict[str, int]:
    out = {s: int(metrics.get(f"master/tasks_{s[5:].lower()}", 0)) for s in ACTIVE_TASK_STATES}
    out.update({f"TASK_{s.upper()}": int(metrics.get(f"master/tasks_{s}", 0)) for s in ENDED_TASK_COUNTERS})
    return out


def cluster_usage(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per resource: total of the reachable agents, used by tasks and offered, summed over agents."""
    total = cluster_total(state)
    used: Counter[str] = Counter()
    offered: Counter[str] = Counter()
    for s in state.get("slaves", []):
        used.update(scalars(s.get("used_resources")))
        offered.update(scalars(s.get("offered_resources")))
    return _usage(resource_names([total]), total, used, offered)


def cluster_view(state: Mapping[str, Any], metrics: Mapping[str, float], now: float,
                 get_tasks: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The page model: master, cluster resources, agents, frameworks, tasks (with the reasons and
    messages of `get_tasks`, an operator API GET_TASKS answer), allocation metrics."""
    total = cluster_total(state)
    agents = agent_rows(state, resource_names([total]))
    flags = state.get("flags") or {}
    return {
        "master": {"id": state.get("id"), "hostname": state.get("hostname"), "leader": state.get("leader"),
                   "version": state.get("version"), "start_time": state.get("start_time"),
                   "uptime_s": max(0.0, now - (state.get("start_time") or now)),
                   "elected": bool(metrics.get("master/elected", 1.0)),
                   "allocator": flags.get("allocator"), "allocation_interval": flags.get("allocation_interval")},
        "resources": cluster_usage(state),
        "allocation": {"runs": int(metrics.get("allocator/mesos/allocation_runs", 0)),
                       "last_round_ms": float(metrics.get("allocator/mesos/allocation_run_ms", 0.0)),
                       "outstanding_offers": int(metrics.get("master/outstanding_offers", 0))},
        "agents": agents[:MAX_AGENTS], "agents_total": len(agents),
        "agents_active": sum(1 for a in agents if a["active"]),
        "frameworks": framework_rows(state, total), "tasks": task_rows(state, get_tasks=get_tasks),
        "tasks_by_state": _task_counts(metrics),
    }


def cluster_metrics(state: Mapping[str, Any], metrics: Mapping[str, float]) -> list[Metric]:
    """The master's Prometheus families (see README "Web UI and metrics")."""
    total = cluster_total(state)
    agents = state.get("slaves", [])
    res = {kind: Metric(f"scylla_master_resources_{kind}", "gauge", f"Scalar resources {what}.")
           for kind, what in (("total", "of the reachable agents"), ("used", "held by tasks"),
                              ("offered", "in outstanding offers"))}
    for u in cluster_usage(state):
        for kind, m in res.items():
            m.add(u[kind], resource=u["name"])
    out = list(res.values())
    out.append(Metric("scylla_master_agents", "gauge", "Registered agents, reachable or not.")
               .add(sum(1 for a in agents if a.get("active", True)), state="reachable")
               .add(sum(1 for a in agents if not a.get("active", True)), state="unreachable"))
    fws = state.get("frameworks", [])
    out.append(Metric("scylla_master_frameworks", "gauge", "Registered frameworks, connected or not.")
               .add(sum(1 for f in fws if f.get("connected", True)), state="connected")
               .add(sum(1 for f in fws if not f.get("connected", True)), state="disconnected"))
    out.append(Metric("scylla_master_outstanding_offers", "gauge", "Offers sent and not yet answered.")
               .add(metrics.get("master/outstanding_offers", 0)))
    counts = _task_counts(metrics)
    active = Metric("scylla_master_tasks", "gauge", "Tasks in a non-terminal state, by state.")
    ended = Metric("scylla_master_tasks_terminal_total", "counter", "Tasks that reached a terminal state.")
    for state_name, n in counts.items():
        (active if state_name in ACTIVE_TASK_STATES else ended).add(n, state=state_name)
    out += [active, ended]
    out.append(Metric("scylla_master_allocation_runs_total", "counter", "Allocation rounds run.")
               .add(metrics.get("allocator/mesos/allocation_runs", 0)))
    out.append(Metric("scylla_master_allocation_round_seconds", "gauge", "Duration of the last allocation round.")
               .add(metrics.get("allocator/mesos/allocation_run_ms", 0.0) / 1000.0))
    dom = Metric("scylla_master_framework_dominant_share", "gauge",
                 "DRF dominant share of each framework: max over resources of (used + offered) / total.")
    per = Metric("scylla_master_framework_share", "gauge", "Each framework's share of each resource.")
    offers = Metric("scylla_master_framework_offers", "gauge", "Outstanding offers per framework.")
    for f in framework_rows(state, total):
        dom.add(f["dominant_share"], framework_id=f["id"], name=f["name"], role=f["role"])
        offers.add(f["offers"], framework_id=f["id"], name=f["name"])
        for r, s in sorted(f["shares"].items()):
            per.add(s, framework_id=f["id"], name=f["name"], resource=r)
    out += [dom, per, offers]
    out.append(Metric("scylla_master_elected", "gauge", "1 when this master is the leader.")
               .add(metrics.get("master/elected", 1.0)))
    out.append(Metric("scylla_master_uptime_seconds", "gauge", "Seconds since this master started.")
               .add(metrics.get("master/uptime_secs", 0.0)))
    return out
