"""A task on an agent as a transition table: STAGING -> STARTING -> RUNNING -> an end state.

The runners (task_runner.py and its kinds) emit the events of
task_events.py; AgentCore carries out the instructions (status updates,
stop, cancel, cleanup).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scylla_singa.common.transition_table import Lifecycle, LifecycleRow, TransitionTable, instruction_from
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from .task_events import (TASK_EVENTS, CancelLaunch, CleanUpTask, SendTaskStatus, StopTask, TaskContainerUp,
                          TaskExited, TaskInvalid, TaskKillRequested, TaskLaunchFailed, TaskLost, TaskStarting,
                          TaskReported, TaskStopped)


def _exit_state(event: TaskExited) -> str:
    return "TASK_FINISHED" if event.code == 0 and not event.oom else "TASK_FAILED"


def _reported_state(event: TaskReported) -> str:
    """A custom executor's word on its task is taken as it is, as Mesos's agent does."""
    return str(event.status["state"])


UPDATE, CLEANUP = SendTaskStatus, CleanUpTask
_ROWS: dict[tuple[str, type], LifecycleRow] = {
    ("TASK_STAGING", TaskStarting): ("TASK_STARTING", (UPDATE,)),
    ("TASK_STAGING", TaskLaunchFailed): ("TASK_FAILED", (UPDATE, CLEANUP)),
    ("TASK_STAGING", TaskInvalid): ("TASK_ERROR", (UPDATE, CLEANUP)),
    ("TASK_STAGING", TaskKillRequested): ("TASK_KILLED", (UPDATE, CancelLaunch, CLEANUP)),
    ("TASK_STAGING", TaskLost): ("TASK_FAILED", (UPDATE, CLEANUP)),
    ("TASK_STARTING", TaskContainerUp): ("TASK_RUNNING", (UPDATE,)),
    ("TASK_STARTING", TaskLaunchFailed): ("TASK_FAILED", (UPDATE, CLEANUP)),
    ("TASK_STARTING", TaskExited): (_exit_state, (UPDATE, CLEANUP)),
    ("TASK_STARTING", TaskKillRequested): ("TASK_KILLING", (StopTask,)),
    ("TASK_STARTING", TaskLost): ("TASK_FAILED", (UPDATE, CLEANUP)),
    ("TASK_RUNNING", TaskExited): (_exit_state, (UPDATE, CLEANUP)),
    ("TASK_RUNNING", TaskKillRequested): ("TASK_KILLING", (UPDATE, StopTask)),
    ("TASK_RUNNING", TaskLost): ("TASK_FAILED", (UPDATE, CLEANUP)),
    ("TASK_KILLING", TaskExited): ("TASK_KILLED", (UPDATE, CLEANUP)),
    ("TASK_KILLING", TaskStopped): ("TASK_KILLED", (UPDATE, CLEANUP)),
    ("TASK_KILLING", TaskLaunchFailed): ("TASK_KILLED", (UPDATE, CLEANUP)),
    ("TASK_KILLING", TaskKillRequested): (None, ()),
    ("TASK_KILLING", TaskLost): ("TASK_KILLED", (UPDATE, CLEANUP)),
}
# The task's own executor reports its status: the task takes that state; the update is sent on, and
# CLEANUP is kept only when the reported state is terminal (TaskLifecycle.handle).
for _state in ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING"):
    _ROWS[(_state, TaskReported)] = (_reported_state, (UPDATE, CLEANUP))
# Late events after the end change nothing (a kill racing the exit, a runner's last word).
for _state in TERMINAL_TASK_STATES:
    for _event in (TaskKillRequested, TaskExited, TaskStopped, TaskContainerUp, TaskStarting, TaskLaunchFailed,
                   TaskLost, TaskReported):
        _ROWS[(_state, _event)] = (None, ())

TASK_STATES = ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", *sorted(TERMINAL_TASK_STATES))
TASK_TABLE: TransitionTable[LifecycleRow] = TransitionTable("task", TASK_STATES, TASK_EVENTS, _ROWS)


class TaskLifecycle(Lifecycle):
    """A task on an agent: STAGING -> STARTING -> RUNNING -> FINISHED/FAILED/KILLED (+ KILLING, ERROR).

    `SendTaskStatus` instructions carry the Mesos state, reason and message
    to send (on `TaskReported`: the executor's own TaskStatus). An exit
    with code 0 finishes the task; non-zero fails it, with
    REASON_CONTAINER_LIMITATION_MEMORY when `oom` is set.
    """

    table = TASK_TABLE

    def __init__(self, task_id: str, state: str = "TASK_STAGING") -> None:
        super().__init__(state, f"task {task_id}")
        self.task_id = task_id

    def handle(self, event: Any) -> list[Any]:
        out = super().handle(event)
        if isinstance(event, TaskReported) and self.state not in TERMINAL_TASK_STATES:
            out = [ins for ins in out if not isinstance(ins, CleanUpTask)]   # still running: nothing to release
        return out

    def instruction(self, kind: type, prev: str, event: Any) -> Any:
        if kind is SendTaskStatus and isinstance(event, TaskReported):   # the executor's own TaskStatus, as is
            return SendTaskStatus(self.state, reported=event.status)
        if kind is not SendTaskStatus:
            return instruction_from(kind, event)
        reason, message = _REASONS.get(type(event), _state_reason)(self.state, event)
        given_reason, given_message = getattr(event, "reason", None), getattr(event, "message", None)
        return SendTaskStatus(self.state, reason if given_reason is None else given_reason,
                              message if given_message is None else given_message,
                              getattr(event, "container_status", None))


def _state_reason(state: str, event: Any) -> tuple[str | None, str]:
    """The default reason and message of an update, by the state it reports."""
    if state == "TASK_KILLED":
        return ("REASON_TASK_KILLED_DURING_LAUNCH" if isinstance(event, TaskKillRequested) else None), "Task killed"
    if state == "TASK_KILLING":
        return None, "Killing the task"
    return None, ""


def _exit_reason(state: str, event: TaskExited) -> tuple[str | None, str]:
    if event.oom:
        return "REASON_CONTAINER_LIMITATION_MEMORY", "Memory limit exceeded"
    if state == "TASK_FAILED":
        return "REASON_COMMAND_EXECUTOR_FAILED", f"Command exited with status {event.code}"
    if state == "TASK_FINISHED":
        return None, "Command exited with status 0"
    return _state_reason(state, event)


# The default reason and message of an update, by the event that caused it (else by its state).
_REASONS: dict[type, Callable[[str, Any], tuple[str | None, str]]] = {
    TaskExited: _exit_reason,
    TaskLaunchFailed: lambda state, e: ("REASON_CONTAINER_LAUNCH_FAILED", "Failed to launch container"),
    TaskInvalid: lambda state, e: ("REASON_TASK_INVALID", "Task is invalid"),
    TaskLost: lambda state, e: ("REASON_EXECUTOR_TERMINATED", "Task lost"),
}
