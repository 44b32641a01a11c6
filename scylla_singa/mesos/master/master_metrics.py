"""`/metrics/snapshot` (and GET_METRICS) with Mesos 1.12's master keys.

Every key a real Mesos master writes is here (tests compare the key sets
with tests/fixtures/apache_mesos/master/metrics-snapshot.*.json). Values
come from the master's records and counters; keys for machinery this master
does not have are present with an honest value and say so below:

- `allocator/event_queue_dispatches`, `allocator/mesos/event_queue_dispatches`,
  `master/event_queue_*`: 0 - one asyncio loop, no libprocess event queues;
- `allocator/mesos/allocation_run_latency_ms*`: 0 for every round - a round
  runs on the loop as soon as it is scheduled (no queue between them);
- `master/operations/*`: counted as operation_feedback.py says (no
  resource providers: CREATE_DISK and DESTROY_DISK stay 0);
- `registrar/*`: the master's own store (frameworks in the work dir; agents
  are soft state): `state_fetch_ms` its read at start, `state_store_ms` its
  writes, `registry_size_bytes` its file;
- `master/http_cache_hits`, `master/dropped_messages`,
  `master/*_revocable_*`, `master/slave_shutdowns_*`,
  `master/slave_unreachable_*` (but `_completed`), `master/messages_update_slave`,
  `master/messages_authenticate`, the `invalid_*` counters but those of status
  updates and of operation status acknowledgements: 0 - none of these happen here.

Per framework (Mesos's `publish_per_framework_metrics`):
`master/frameworks/<name>/<id>/calls[/<call>]`, `events[/<event>]`,
`offers/{sent,accepted,declined,rescinded}`, `operations/<op>`,
`roles/<role>/suppressed`, `subscribed`, `tasks/{active,terminal}/<state>`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from scylla_singa.mesos.api.metric_values import percentiles, system_metrics
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from .operator_views import total

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import FrameworkRec

ACTIVE_STATES = ("task_killing", "task_running", "task_staging", "task_starting", "task_unknown", "task_unreachable")
TERMINAL_STATES = ("task_dropped", "task_error", "task_failed", "task_finished", "task_gone", "task_gone_by_operator",
                   "task_killed", "task_lost")
CALL_NAMES = ("accept", "accept_inverse_offers", "acknowledge", "acknowledge_operation_status", "decline",
              "decline_inverse_offers", "kill", "message", "reconcile", "reconcile_operations", "request", "revive",
              "shutdown", "subscribe", "suppress", "teardown", "update_framework")
EVENT_NAMES = ("error", "failure", "heartbeat", "inverse_offers", "message", "offers", "rescind",
               "rescind_inverse_offer", "subscribed", "update", "update_operation_status")
OPERATIONS = ("create", "create_disk", "destroy", "destroy_disk", "grow_volume", "launch", "launch_group", "reserve",
              "shrink_volume", "unreserve")
OPERATION_STATES = ("dropped", "error", "failed", "finished", "gone_by_operator", "pending", "recovering", "total",
                    "unreachable")
# Counters that stay 0 here (see the module docstring), by their full key.
ZERO_KEYS = (
    "allocator/event_queue_dispatches", "allocator/mesos/event_queue_dispatches", "master/dropped_messages",
    "master/event_queue_dispatches", "master/event_queue_http_requests", "master/event_queue_messages",
    "master/http_cache_hits", "master/invalid_executor_to_framework_messages",
    "master/invalid_framework_to_executor_messages", "master/invalid_operation_status_updates",
    "master/invalid_status_update_acknowledgements", "master/messages_authenticate", "master/messages_exited_executor",
    "master/messages_operation_status_update", "master/messages_update_slave", "master/messages_unregister_slave",
    "master/recovery_slave_removals", "master/slave_removals/reason_registered",
    "master/slave_removals/reason_unregistered", "master/slave_shutdowns_canceled", "master/slave_shutdowns_completed",
    "master/slave_shutdowns_scheduled", "master/slave_unreachable_canceled", "master/slave_unreachable_scheduled",
    "master/valid_operation_status_updates")
# Counters the master keeps (Master.count), read as they are.
COUNTED_KEYS = (
    "master/invalid_operation_status_update_acknowledgements", "master/invalid_status_updates",
    "master/messages_deactivate_framework", "master/messages_decline_offers", "master/messages_executor_to_framework",
    "master/messages_framework_to_executor", "master/messages_kill_task", "master/messages_launch_tasks",
    "master/messages_operation_status_update_acknowledgement", "master/messages_reconcile_operations",
    "master/messages_reconcile_tasks", "master/messages_register_framework", "master/messages_register_slave",
    "master/messages_reregister_framework", "master/messages_reregister_slave", "master/messages_resource_request",
    "master/messages_revive_offers", "master/messages_status_update", "master/messages_status_update_acknowledgement",
    "master/messages_suppress_offers", "master/messages_unregister_framework", "master/slave_registrations",
    "master/slave_removals", "master/slave_removals/reason_unhealthy", "master/slave_reregistrations",
    "master/slave_unreachable_completed", "master/valid_executor_to_framework_messages",
    "master/valid_framework_to_executor_messages", "master/valid_operation_status_update_acknowledgements",
    "master/valid_status_update_acknowledgements", "master/valid_status_updates")


def metrics_json(m: Master) -> dict[str, float]:
    """The master's `/metrics/snapshot`, keys sorted as Mesos writes them."""
    out: dict[str, float] = dict.fromkeys(ZERO_KEYS, 0.0)
    out.update({k: float(m.counters.get(k, 0)) for k in COUNTED_KEYS})
    out.update(_resources(m))
    out.update(_allocator(m))
    out.update(_tasks_and_registrations(m))
    for f in m.frameworks.values():
        out.update(framework_metrics(m, f))
    out.update(m.operation_feedback.metrics(tuple(op for op in OPERATIONS if op not in ("launch", "launch_group")),
                                            OPERATION_STATES))
    out.update(percentiles("registrar/state_store_ms", list(m.store.store_ms)))
    out.update({"registrar/state_fetch_ms": m.store.fetch_ms, "registrar/registry_size_bytes":
                float(m.store.size_bytes()), "registrar/queued_operations": 0.0})
    out.update(system_metrics())
    for key, n in m.counters.items():  # master/task_<state>/source_<source>/reason_<reason>
        if key.startswith("master/task_") and "/source_" in key:
            out[key] = float(n)
    return dict(sorted(out.items()))


def _resources(m: Master) -> dict[str, float]:
    agents = [a for a in m.agent_registry.agents.values() if a.active]
    total_res = total(a.total for a in agents)
    used = total(t.resources for a in m.agent_registry.agents.values() for t in a.tasks.values())
    offered = total(o.resources for o in m.offers.values())
    out: dict[str, float] = {}
    for name in ("cpus", "mem", "disk", "gpus"):
        t, u = total_res.scalar(name), used.scalar(name)
        out.update({f"master/{name}_total": t, f"master/{name}_used": u, f"master/{name}_percent": u / t if t else 0.0,
                    f"master/{name}_revocable_total": 0.0, f"master/{name}_revocable_used": 0.0,
                    f"master/{name}_revocable_percent": 0.0})
        if name != "gpus" or t:
            out[f"allocator/mesos/resources/{name}/total"] = t
            out[f"allocator/mesos/resources/{name}/offered_or_allocated"] = u + offered.scalar(name)
    # not a Mesos key, kept for the web UI and older dashboards of this project
    for name in ("cpus", "mem", "disk", "gpus"):
        out[f"master/{name}_offered"] = offered.scalar(name)
    return out


def _allocator(m: Master) -> dict[str, float]:
    out = percentiles("allocator/mesos/allocation_run_ms", list(m.allocation_ms))
    out.update(percentiles("allocator/mesos/allocation_run_latency_ms", [0.0] * len(m.allocation_ms)))
    out["allocator/mesos/allocation_runs"] = float(m.allocation_runs)
    totals = total(a.total for a in m.agent_registry.agents.values() if a.active)
    for role, quota in sorted(m.quotas.items()):   # Mesos's quota gauges, for the roles that have one
        for name, amount in quota.guarantees.items():
            out[f"allocator/mesos/quota/roles/{role}/resources/{name}/guarantee"] = amount
        for name, amount in quota.limits.items():
            out[f"allocator/mesos/quota/roles/{role}/resources/{name}/limit"] = amount
    for role in sorted({f.role for f in m.frameworks.values()}):
        held = total(t.resources for f in m.frameworks.values() if f.role == role for t in f.tasks.values())
        held = held + total(m.offers[o].resources for f in m.frameworks.values() if f.role == role
                            for o in f.offers if o in m.offers)
        shares = [held.scalar(k) / v for k, v in totals.amounts.items() if v]
        out[f"allocator/mesos/roles/{role}/shares/dominant"] = max(shares, default=0.0)
        used = total(t.resources for f in m.frameworks.values() if f.role == role for t in f.tasks.values())
        # what the role consumes of its quota (or its absent one), as Mesos counts it: what its tasks hold
        # unreserved, and its reservations, used or not
        consumed = used.unreserved() + total(a.total.reserved(role) for a in m.agent_registry.agents.values())
        for name in ("cpus", "mem"):
            if consumed.scalar(name):
                out[f"allocator/mesos/quota/roles/{role}/resources/{name}/consumed"] = consumed.scalar(name)
        filters = sum(m.allocator.filter_count(f.id, m.now()) for f in m.frameworks.values() if f.role == role)
        out[f"allocator/mesos/offer_filters/roles/{role}/active"] = float(filters)
    return out


def _tasks_and_registrations(m: Master) -> dict[str, float]:
    out: dict[str, float] = {}
    live = [t for f in m.frameworks.values() for t in f.tasks.values()]
    for state in ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_UNREACHABLE"):
        out[f"master/tasks_{state[5:].lower()}"] = float(sum(1 for t in live if t.state == state))
    for state in TERMINAL_STATES:
        out[f"master/tasks_{state[5:]}"] = float(m.counters.get(f"master/tasks_{state[5:]}", 0))
    frameworks = list(m.frameworks.values())
    connected = float(sum(1 for f in frameworks if f.connected))
    out.update({"master/frameworks_active": float(sum(1 for f in frameworks if f.active)),
                "master/frameworks_connected": connected,
                "master/frameworks_disconnected": float(len(frameworks)) - connected,
                "master/frameworks_inactive": float(sum(1 for f in frameworks if not f.active))})
    agents = list(m.agent_registry.agents.values())
    active = float(sum(1 for a in agents if a.active))
    out.update({"master/slaves_active": active, "master/slaves_connected": active,
                "master/slaves_disconnected": float(len(agents)) - active,
                "master/slaves_inactive": float(sum(1 for a in agents if not a.healthy)),
                "master/slaves_unreachable": 0.0, "master/outstanding_offers": float(len(m.offers)),
                "master/elected": 1.0 if m.leader_address is None else 0.0,
                "master/uptime_secs": time.time() - m.start_time,
                "master/operator_event_stream_subscribers": float(len(m.operator_events.subscribers))})
    return out


def framework_metrics(m: Master, f: FrameworkRec) -> dict[str, float]:
    """Mesos's per-framework keys, under master/frameworks/<name>/<id>/."""
    base = f"master/frameworks/{f.info.get('name', '')}/{f.id}"
    c = f.counters
    out = {f"{base}/calls": float(sum(c.get(f"calls/{n}", 0) for n in CALL_NAMES)),
           f"{base}/events": float(sum(c.get(f"events/{n}", 0) for n in EVENT_NAMES)),
           f"{base}/subscribed": 1.0 if f.connected else 0.0}
    out.update({f"{base}/calls/{n}": float(c.get(f"calls/{n}", 0)) for n in CALL_NAMES})
    out.update({f"{base}/events/{n}": float(c.get(f"events/{n}", 0)) for n in EVENT_NAMES})
    out.update({f"{base}/offers/{n}": float(c.get(f"offers/{n}", 0))
                for n in ("accepted", "declined", "rescinded", "sent")})
    out.update({f"{base}/operations": float(sum(c.get(f"operations/{op}", 0) for op in OPERATIONS))})
    out.update({f"{base}/operations/{op}": float(c.get(f"operations/{op}", 0)) for op in OPERATIONS})
    out[f"{base}/roles/{f.role}/suppressed"] = 1.0 if m.allocator.is_suppressed(f.id) else 0.0
    states = [t.state for t in f.tasks.values()]
    for state in ACTIVE_STATES:
        out[f"{base}/tasks/active/{state}"] = float(states.count(state.upper()))
    for state in TERMINAL_STATES:
        out[f"{base}/tasks/terminal/{state}"] = float(c.get(f"tasks/terminal/{state}", 0))
    return out


def count_terminal(m: Master, f: FrameworkRec | None, status: dict) -> None:
    """Count a task's terminal update as Mesos does: per state, source and reason, and per framework."""
    state = status.get("state", "")
    if state not in TERMINAL_TASK_STATES:
        return
    source = {"SOURCE_MASTER": "source_master", "SOURCE_AGENT": "source_slave",
              "SOURCE_EXECUTOR": "source_executor"}.get(status.get("source", ""), "source_executor")
    if status.get("reason"):
        m.count(f"master/{state.lower()}/{source}/{status['reason'].lower()}")
    if f is not None:
        key = f"tasks/terminal/{state.lower()}"
        f.counters[key] = f.counters.get(key, 0) + 1
