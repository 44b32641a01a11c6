"""Transition tables: tasks on an agent, frameworks and agents on the master."""

from __future__ import annotations

import pytest

from scylla_singa.common.transition_table import Event, InvalidTransition
from scylla_singa.mesos.agent.task_lifecycle import TaskLifecycle
from scylla_singa.mesos.master.registration_lifecycles import AgentLinkLifecycle, FrameworkLifecycle


def _drive(events: list[Event]) -> tuple[TaskLifecycle, list]:
    t = TaskLifecycle("t")
    out = []
    for e in events:
        out += [(i.kind, i.data.get("state"), i.data.get("reason")) for i in t.handle(e)]
    return t, out


@pytest.mark.parametrize("events,final,updates", [
    (["starting", "running", ("exited", {"code": 0})], "TASK_FINISHED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FINISHED", None)]),
    (["starting", "running", ("exited", {"code": 2})], "TASK_FAILED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED")]),
    (["starting", "running", ("exited", {"code": 137, "oom": True})], "TASK_FAILED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FAILED", "REASON_CONTAINER_LIMITATION_MEMORY")]),
    (["starting", "running", "kill", ("exited", {"code": 143})], "TASK_KILLED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_KILLING", None), ("TASK_KILLED", None)]),
    (["kill"], "TASK_KILLED", [("TASK_KILLED", "REASON_TASK_KILLED_DURING_LAUNCH")]),
    ([("launch_failed", {"message": "no image"})], "TASK_FAILED",
     [("TASK_FAILED", "REASON_CONTAINER_LAUNCH_FAILED")]),
    ([("invalid", {"message": "bad volume"})], "TASK_ERROR", [("TASK_ERROR", "REASON_TASK_INVALID")]),
    (["starting", "running", ("exited", {"code": 0}), "kill", "exited"], "TASK_FINISHED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FINISHED", None)]),
], ids=["finish", "fail", "oom", "kill-running", "kill-staging", "launch-failed", "invalid", "late-events-ignored"])
def test_task_transitions(events, final, updates) -> None:
    evs = [Event(e) if isinstance(e, str) else Event(*e) for e in events]
    t, out = _drive(evs)
    assert t.state == final
    assert [(s, r) for kind, s, r in out if kind == "update"] == updates


def test_kill_during_staging_cancels_and_cleans_up() -> None:
    _, out = _drive([Event("kill")])
    assert [k for k, _, _ in out] == ["update", "cancel", "cleanup"]


def test_illegal_transition_carries_history() -> None:
    t = TaskLifecycle("t")
    t.handle(Event("starting"))
    with pytest.raises(InvalidTransition) as exc:
        t.handle(Event("starting"))
    assert exc.value.history == [("TASK_STAGING", "starting")]


def test_framework_lifecycle() -> None:
    f = FrameworkLifecycle("NEW")
    assert [i.kind for i in f.handle(Event("subscribe"))] == ["persist", "subscribed", "activate"]
    assert "fail_over_stream" in [i.kind for i in f.handle(Event("subscribe"))]
    assert [i.kind for i in f.handle(Event("stream_closed"))] == ["deactivate", "rescind_offers", "start_failover"]
    assert "cancel_failover" in [i.kind for i in f.handle(Event("subscribe"))]
    f.handle(Event("stream_closed"))
    assert [i.kind for i in f.handle(Event("failover_timeout"))] == ["remove"]
    assert f.state == "REMOVED" and f.handle(Event("teardown")) == []


def test_agent_link_lifecycle() -> None:
    a = AgentLinkLifecycle("NEW")
    assert [i.kind for i in a.handle(Event("reregister"))] == ["add", "reconcile", "registered"]
    a.handle(Event("disconnected"))
    assert [i.kind for i in a.handle(Event("reregister"))] == ["activate", "reconcile", "registered"]
    a.handle(Event("disconnected"))
    assert [i.kind for i in a.handle(Event("timeout"))] == ["remove"]
