"""Transition tables: tasks on an agent, frameworks and agents on the master; the master's instruction shells."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from scylla_singa.common.transition_table import TransitionTable, UnknownInstruction
from scylla_singa.mesos.agent.task_events import (CancelLaunch, CleanUpTask, SendTaskStatus, StopTask,
                                                  TaskContainerUp, TaskExited, TaskInvalid, TaskKillRequested,
                                                  TaskLaunchFailed, TaskLost, TaskReported, TaskStarting,
                                                  TaskStopped)
from scylla_singa.mesos.agent.task_lifecycle import TASK_TABLE, TaskLifecycle
from scylla_singa.mesos.master import master_core, registration_lifecycles as rl
from scylla_singa.mesos.master.master_core import Master
from scylla_singa.mesos.master.master_records import MasterConfig
from tests.support.transition_tables import assert_refused_with_story, missing_pairs, sample_event


def _drive(events: list) -> tuple[TaskLifecycle, list]:
    t = TaskLifecycle("t")
    out = []
    for e in events:
        out += t.handle(e)
    return t, out


def _updates(out: list) -> list[tuple[str, str | None]]:
    return [(i.state, i.reason) for i in out if isinstance(i, SendTaskStatus)]


@pytest.mark.parametrize("events,final,updates", [
    ([TaskStarting(), TaskContainerUp(), TaskExited(0, message="")], "TASK_FINISHED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FINISHED", None)]),
    ([TaskStarting(), TaskContainerUp(), TaskExited(2)], "TASK_FAILED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED")]),
    ([TaskStarting(), TaskContainerUp(), TaskExited(137, oom=True)], "TASK_FAILED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FAILED", "REASON_CONTAINER_LIMITATION_MEMORY")]),
    ([TaskStarting(), TaskContainerUp(), TaskKillRequested(3), TaskExited(143)], "TASK_KILLED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_KILLING", None), ("TASK_KILLED", None)]),
    ([TaskKillRequested(3)], "TASK_KILLED", [("TASK_KILLED", "REASON_TASK_KILLED_DURING_LAUNCH")]),
    ([TaskLaunchFailed(message="no image")], "TASK_FAILED", [("TASK_FAILED", "REASON_CONTAINER_LAUNCH_FAILED")]),
    ([TaskInvalid("bad volume")], "TASK_ERROR", [("TASK_ERROR", "REASON_TASK_INVALID")]),
    ([TaskStarting(), TaskContainerUp(), TaskLost("REASON_AGENT_RESTARTED", "gone")], "TASK_FAILED",
     [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FAILED", "REASON_AGENT_RESTARTED")]),
    ([TaskStarting(), TaskContainerUp(), TaskExited(0), TaskKillRequested(3), TaskExited(0), TaskStopped()],
     "TASK_FINISHED", [("TASK_STARTING", None), ("TASK_RUNNING", None), ("TASK_FINISHED", None)]),
], ids=["finish", "fail", "oom", "kill-running", "kill-staging", "launch-failed", "invalid", "lost",
        "late-events-change-nothing"])
def test_task_transitions(events, final, updates) -> None:
    t, out = _drive(events)
    assert t.state == final
    assert _updates(out) == updates


@pytest.mark.parametrize("events,message", [
    ([TaskStarting(), TaskContainerUp(), TaskExited(2)], "Command exited with status 2"),
    ([TaskStarting(), TaskContainerUp(), TaskExited(2, message="")], ""),
    ([TaskStarting(), TaskContainerUp(), TaskExited(137, oom=True)], "Memory limit exceeded"),
    ([TaskStarting(), TaskContainerUp(), TaskKillRequested(3)], "Killing the task"),
    ([TaskStarting(), TaskContainerUp(), TaskKillRequested(3), TaskStopped()], "Task killed"),
    ([TaskStarting(), TaskContainerUp(), TaskKillRequested(3), TaskStopped("by SIGTERM")], "by SIGTERM"),
    ([TaskLaunchFailed()], "Failed to launch container"),
    ([TaskStarting(), TaskLost()], "Task lost"),
], ids=["exit-code", "empty-message-kept", "oom", "killing", "killed", "stopped-says-why", "launch-failed",
        "lost"])
def test_an_update_says_the_event_s_message_or_the_transition_s_default(events, message) -> None:
    _, out = _drive(events)
    assert [i for i in out if isinstance(i, SendTaskStatus)][-1].message == message


def test_kill_during_staging_updates_cancels_and_cleans_up() -> None:
    _, out = _drive([TaskKillRequested(3)])
    assert [type(i) for i in out] == [SendTaskStatus, CancelLaunch, CleanUpTask]


def test_kill_while_running_stops_the_container_with_the_grace_period() -> None:
    _, out = _drive([TaskStarting(), TaskContainerUp(), TaskKillRequested(7.5)])
    assert out[-1] == StopTask(7.5)


def test_the_running_update_carries_the_container_status() -> None:
    status = {"network_infos": [{"ip_addresses": [{"ip_address": "10.0.0.9"}]}]}
    _, out = _drive([TaskStarting(), TaskContainerUp(status)])
    assert out[-1].container_status == status


def _executor_status(state: str) -> dict:
    """A TaskStatus as a custom executor sends it in UPDATE (its own uuid and source)."""
    return {"task_id": {"value": "t"}, "state": state, "uuid": "AAAAAAAAAAAAAAAAAAAAAA==",
            "source": "SOURCE_EXECUTOR", "message": "from the executor"}


@pytest.mark.parametrize("state,reported,instructions", [
    ("TASK_STAGING", "TASK_RUNNING", [SendTaskStatus]),
    ("TASK_STAGING", "TASK_FAILED", [SendTaskStatus, CleanUpTask]),
    ("TASK_STARTING", "TASK_STARTING", [SendTaskStatus]),
    ("TASK_STARTING", "TASK_RUNNING", [SendTaskStatus]),
    ("TASK_STARTING", "TASK_ERROR", [SendTaskStatus, CleanUpTask]),
    ("TASK_RUNNING", "TASK_RUNNING", [SendTaskStatus]),
    ("TASK_RUNNING", "TASK_FINISHED", [SendTaskStatus, CleanUpTask]),
    ("TASK_RUNNING", "TASK_FAILED", [SendTaskStatus, CleanUpTask]),
    ("TASK_RUNNING", "TASK_KILLING", [SendTaskStatus]),
    ("TASK_KILLING", "TASK_KILLING", [SendTaskStatus]),
    ("TASK_KILLING", "TASK_KILLED", [SendTaskStatus, CleanUpTask]),
    ("TASK_KILLING", "TASK_FINISHED", [SendTaskStatus, CleanUpTask]),
], ids=["staging-running", "staging-failed", "starting-starting", "starting-running", "starting-error",
        "running-running", "running-finished", "running-failed", "running-killing", "killing-killing",
        "killing-killed", "killing-finished"])
def test_an_executor_s_report_is_the_task_s_state_sent_on_as_it_is(state, reported, instructions) -> None:
    task = TaskLifecycle("t", state)
    status = _executor_status(reported)
    out = task.handle(TaskReported(status))
    assert task.state == reported
    assert [type(i) for i in out] == instructions
    assert out[0] == SendTaskStatus(reported, reported=status)   # its own uuid, source and message


@pytest.mark.parametrize("state", ["TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST"])
def test_an_executor_s_report_after_the_end_changes_nothing(state) -> None:
    task = TaskLifecycle("t", state)
    assert task.handle(TaskReported(_executor_status("TASK_RUNNING"))) == [] and task.state == state


def test_a_kill_after_an_executor_s_running_report_goes_through_killing() -> None:
    _, out = _drive([TaskStarting(), TaskReported(_executor_status("TASK_RUNNING")), TaskKillRequested(2),
                     TaskReported(_executor_status("TASK_KILLED"))])
    assert [(type(i).__name__, getattr(i, "state", None)) for i in out] == [
        ("SendTaskStatus", "TASK_STARTING"), ("SendTaskStatus", "TASK_RUNNING"),
        ("SendTaskStatus", "TASK_KILLING"), ("StopTask", None),
        ("SendTaskStatus", "TASK_KILLED"), ("CleanUpTask", None)]


@pytest.mark.parametrize("state,event", missing_pairs(TASK_TABLE))
def test_every_task_pair_without_a_row_is_refused_with_the_story(state, event) -> None:
    task = TaskLifecycle("t1", state)
    err = assert_refused_with_story(lambda: task.handle(sample_event(event)), task, state, event)
    assert err.machine == "task t1" and task.state == state


def test_the_story_tells_the_transitions_so_far() -> None:
    task, _ = _drive([TaskStarting()])
    with pytest.raises(Exception) as info:
        task.handle(TaskStarting())
    assert info.value.story == ("TASK_STAGING --TaskStarting--> TASK_STARTING",)


# ---- the master's frameworks and agent links ------------------------------------------------------

@pytest.mark.parametrize("state,event,to,instructions", [
    ("NEW", rl.FrameworkSubscribes(), "CONNECTED",
     [rl.PersistFramework(), rl.SendSubscribed(), rl.ActivateFramework()]),
    ("CONNECTED", rl.FrameworkSubscribes(), "CONNECTED",
     [rl.FailOverOldStream(), rl.PersistFramework(), rl.SendSubscribed()]),
    ("DISCONNECTED", rl.FrameworkSubscribes(), "CONNECTED",
     [rl.PersistFramework(), rl.SendSubscribed(), rl.ActivateFramework(), rl.CancelFailoverTimer()]),
    ("CONNECTED", rl.FrameworkStreamClosed(), "DISCONNECTED",
     [rl.DeactivateFramework(), rl.RescindFrameworkOffers(), rl.StartFailoverTimer()]),
    ("CONNECTED", rl.FrameworkTornDown(), "REMOVED", [rl.CloseFrameworkStream(), rl.RemoveFramework()]),
    ("DISCONNECTED", rl.FrameworkFailoverExpired(), "REMOVED", [rl.RemoveFramework()]),
    ("RECOVERED", rl.FrameworkFailoverExpired(), "REMOVED", [rl.RemoveFramework()]),
    ("REMOVED", rl.FrameworkTornDown(), "REMOVED", []),
    ("CONNECTED", rl.FrameworkFailoverExpired(), "CONNECTED", []),
], ids=["subscribe", "fail-over-to-a-new-stream", "come-back", "stream-breaks", "teardown",
        "failover-expires", "recovered-never-returns", "teardown-after-removal", "stale-failover-timer"])
def test_framework_transitions(state, event, to, instructions) -> None:
    f = rl.FrameworkLifecycle(state)
    assert f.handle(event) == instructions and f.state == to


@pytest.mark.parametrize("state,event,to,instructions", [
    ("NEW", rl.AgentRegisters({"hostname": "h"}, "r1"), "CONNECTED",
     [rl.AddAgent(), rl.SendAgentRegistered("r1")]),
    ("NEW", rl.AgentReregisters({"tasks": []}, "r2"), "CONNECTED",
     [rl.AddAgent(), rl.ReconcileAgentTasks({"tasks": []}), rl.SendAgentRegistered("r2")]),
    ("DISCONNECTED", rl.AgentReregisters({"tasks": []}, "r3"), "CONNECTED",
     [rl.ActivateAgent(), rl.ReconcileAgentTasks({"tasks": []}), rl.SendAgentRegistered("r3")]),
    ("CONNECTED", rl.AgentDisconnected(), "DISCONNECTED",
     [rl.DeactivateAgent(), rl.RescindAgentOffers(), rl.StartReregisterTimer()]),
    ("CONNECTED", rl.AgentUnreachable("no pongs for 10s"), "REMOVED", [rl.RemoveAgent("no pongs for 10s")]),
    ("DISCONNECTED", rl.AgentReregisterTimeout(), "REMOVED", [rl.RemoveAgent(None)]),
    ("DISCONNECTED", rl.AgentUnreachable("marked gone"), "REMOVED", [rl.RemoveAgent("marked gone")]),
    ("REMOVED", rl.AgentDisconnected(), "REMOVED", []),
], ids=["register", "reregister-after-master-restart", "come-back", "link-closes", "unreachable",
        "never-came-back", "gone-after-it-left", "late-link-close"])
def test_agent_link_transitions(state, event, to, instructions) -> None:
    a = rl.AgentLinkLifecycle(state)
    assert a.handle(event) == instructions and a.state == to


@pytest.mark.parametrize("state,event", missing_pairs(rl.FRAMEWORK_TABLE))
def test_every_framework_pair_without_a_row_is_refused_with_the_story(state, event) -> None:
    f = rl.FrameworkLifecycle(state, "framework fw1")
    assert_refused_with_story(lambda: f.handle(sample_event(event)), f, state, event)


@pytest.mark.parametrize("state,event", missing_pairs(rl.AGENT_TABLE))
def test_every_agent_link_pair_without_a_row_is_refused_with_the_story(state, event) -> None:
    a = rl.AgentLinkLifecycle(state, "agent a1")
    assert_refused_with_story(lambda: a.handle(sample_event(event)), a, state, event)


@dataclass(frozen=True)
class PersistFramwork:
    """A typo of PersistFramework: an instruction type the master has no handler for."""


@pytest.fixture
def master():
    loop = asyncio.new_event_loop()
    m = Master(MasterConfig(work_dir=None))
    m.start(loop)
    yield m
    m.stop()
    loop.close()


def test_a_typo_d_instruction_raises_in_the_master(master) -> None:
    fw = rl.FrameworkLifecycle("NEW", "framework fw1")
    with pytest.raises(UnknownInstruction, match="PersistFramwork"):
        master._framework_do(PersistFramwork(), fw, None)
    with pytest.raises(UnknownInstruction, match="PersistFramwork"):
        master.agent_registry._agent_do(PersistFramwork(), None)


def test_a_table_row_emitting_an_instruction_the_master_cannot_carry_out_fails_at_start(monkeypatch) -> None:
    rows = dict(rl.FRAMEWORK_TABLE.rows)
    rows[("NEW", rl.FrameworkSubscribes)] = ("CONNECTED", (PersistFramwork, rl.SendSubscribed))
    typo = TransitionTable("framework", rl.FRAMEWORK_TABLE.states, rl.FRAMEWORK_TABLE.events, rows)
    monkeypatch.setattr(master_core, "FRAMEWORK_TABLE", typo)
    with pytest.raises(UnknownInstruction, match="has no handler for PersistFramwork"):
        Master(MasterConfig(work_dir=None))


def test_a_row_for_an_undeclared_state_fails_when_the_table_is_built() -> None:
    with pytest.raises(ValueError, match="CONECTED"):
        TransitionTable("framework", ("NEW", "CONNECTED"), (rl.FrameworkSubscribes,),
                        {("CONECTED", rl.FrameworkSubscribes): ("CONNECTED", ())})


def test_every_scheduler_call_has_a_handler(master) -> None:
    assert set(master._calls) == master_core.CALLS - {"SUBSCRIBE"}
    # the custom executors' calls and operation feedback have handlers of their own
    assert (master._calls["SHUTDOWN"], master._calls["MESSAGE"]) == (master._call_shutdown, master._call_message)
    feedback = master.operation_feedback
    assert (master._calls["RECONCILE_OPERATIONS"], master._calls["ACKNOWLEDGE_OPERATION_STATUS"]) == (
        feedback.reconcile, feedback.acknowledge)


def test_a_call_kind_without_a_handler_fails_when_the_master_is_built(monkeypatch) -> None:
    monkeypatch.setattr(master_core, "CALLS", master_core.CALLS | {"REVIEW"})  # a typo'd REVIVE in the table
    with pytest.raises(RuntimeError, match=r"calls without a handler: \['REVIEW'\]"):
        Master(MasterConfig(work_dir=None))
