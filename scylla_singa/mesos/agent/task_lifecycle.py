"""A task on an agent as a transition table: STAGING -> STARTING -> RUNNING -> an end state.

The runners (task_runner.py and its kinds) emit the events; AgentCore
executes the instructions (status updates, stop, cleanup).
"""

from __future__ import annotations

from typing import Any

from scylla_singa.common.transition_table import Event, Instruction, Lifecycle, Table
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES

# ---- a task on an agent ------------------------------------------------
# Events: starting (sandbox fetched, container being created), running
# (container up), exited (code, oom), launch_failed, invalid, kill, stopped
# (the container ended after a kill), lost (agent restart found nothing),
# reported (a custom executor sent the task's status itself: its state is
# taken as it is).
TASK_TABLE: Table = {
    ("TASK_STAGING", "starting"): ("TASK_STARTING", ("update",)),
    ("TASK_STAGING", "launch_failed"): ("TASK_FAILED", ("update", "cleanup")),
    ("TASK_STAGING", "invalid"): ("TASK_ERROR", ("update", "cleanup")),
    ("TASK_STAGING", "kill"): ("TASK_KILLED", ("update", "cancel", "cleanup")),
    ("TASK_STARTING", "running"): ("TASK_RUNNING", ("update",)),
    ("TASK_STARTING", "launch_failed"): ("TASK_FAILED", ("update", "cleanup")),
    ("TASK_STARTING", "exited"): ("*exit", ("update", "cleanup")),
    ("TASK_STARTING", "kill"): ("TASK_KILLING", ("stop",)),
    ("TASK_RUNNING", "exited"): ("*exit", ("update", "cleanup")),
    ("TASK_RUNNING", "kill"): ("TASK_KILLING", ("update", "stop")),
    ("TASK_RUNNING", "lost"): ("TASK_FAILED", ("update", "cleanup")),
    ("TASK_STARTING", "lost"): ("TASK_FAILED", ("update", "cleanup")),
    ("TASK_STAGING", "lost"): ("TASK_FAILED", ("update", "cleanup")),
    ("TASK_KILLING", "exited"): ("TASK_KILLED", ("update", "cleanup")),
    ("TASK_KILLING", "stopped"): ("TASK_KILLED", ("update", "cleanup")),
    ("TASK_KILLING", "launch_failed"): ("TASK_KILLED", ("update", "cleanup")),
    ("TASK_KILLING", "kill"): (None, ()),
    ("TASK_KILLING", "lost"): ("TASK_KILLED", ("update", "cleanup")),
}
for _s in ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING"):
    TASK_TABLE[(_s, "reported")] = ("*reported", ("update",))
for _s in TERMINAL_TASK_STATES:
    for _e in ("kill", "exited", "stopped", "running", "starting", "launch_failed", "lost", "reported"):
        TASK_TABLE[(_s, _e)] = (None, ())  # late events after the end change nothing


class TaskLifecycle(Lifecycle):
    """A task on an agent: STAGING -> STARTING -> RUNNING -> FINISHED/FAILED/KILLED (+ KILLING, ERROR).

    `update` instructions carry the Mesos state, reason and message to send.
    An `exited` event with code 0 finishes the task; non-zero fails it, with
    REASON_CONTAINER_LIMITATION_MEMORY when `oom` is set.
    """

    table = TASK_TABLE
    what = "task"

    def __init__(self, task_id: str, state: str = "TASK_STAGING") -> None:
        super().__init__(state)
        self.task_id = task_id

    def handle(self, event: Event) -> list[Instruction]:
        out = super().handle(event)
        if self.state == "*exit":
            self.state = _exit_state(event.data)
            out = [self.instruction(i.kind, "", event) for i in out]
        elif self.state == "*reported":
            self.state = event.data["status"]["state"]
            out = [self.instruction("update", "", event)]
            if self.state in TERMINAL_TASK_STATES:
                out.append(self.instruction("cleanup", "", event))
        return out

    def instruction(self, kind: str, prev: str, event: Event) -> Instruction:
        data = dict(event.data)
        if kind == "update" and event.kind == "reported":   # the executor's own TaskStatus, sent on as it is
            return Instruction(kind, {"state": self.state, "reported": data["status"]})
        if kind == "update":
            data.setdefault("state", self.state)
            data["state"] = self.state
            reason, message = _reason(self.state, event)
            data.setdefault("reason", reason)
            data.setdefault("message", message)
            if data.get("reason") is None:
                data.pop("reason")
        return Instruction(kind, data)


def _exit_state(data: dict[str, Any]) -> str:
    return "TASK_FINISHED" if data.get("code") == 0 and not data.get("oom") else "TASK_FAILED"


def _reason(state: str, event: Event) -> tuple[str | None, str]:
    d = event.data
    if event.kind == "exited" and d.get("oom"):
        return "REASON_CONTAINER_LIMITATION_MEMORY", d.get("message") or "Memory limit exceeded"
    if event.kind == "exited" and state == "TASK_FAILED":
        return "REASON_COMMAND_EXECUTOR_FAILED", d.get("message") or f"Command exited with status {d.get('code')}"
    if event.kind == "exited" and state == "TASK_FINISHED":
        return None, d.get("message") or "Command exited with status 0"
    if event.kind == "launch_failed":
        return d.get("reason", "REASON_CONTAINER_LAUNCH_FAILED"), d.get("message", "Failed to launch container")
    if event.kind == "invalid":
        return "REASON_TASK_INVALID", d.get("message", "Task is invalid")
    if event.kind == "lost":
        return d.get("reason", "REASON_EXECUTOR_TERMINATED"), d.get("message", "Task lost")
    if state == "TASK_KILLED":
        why = "REASON_TASK_KILLED_DURING_LAUNCH" if event.kind == "kill" else None
        return why, d.get("message") or "Task killed"
    if state == "TASK_KILLING":
        return None, "Killing the task"
    return None, d.get("message", "")
