"""Lifecycles as explicit transition tables (tasks, frameworks, agent links).

Each lifecycle has one entry point, `handle(event) -> list[instruction]`.
A table maps (state, event kind) to (next state, instruction kinds); an
unknown pair raises `IllegalTransition` carrying the history. The shells
(agent runners, master) execute the instructions; these classes do no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TERMINAL = frozenset({"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST",
                      "TASK_DROPPED", "TASK_GONE", "TASK_GONE_BY_OPERATOR"})


class IllegalTransition(RuntimeError):
    """An event that the current state does not accept; `history` is the list of (state, event)."""

    def __init__(self, what: str, state: str, event: str, history: list[tuple[str, str]]) -> None:
        super().__init__(f"{what}: event {event} is illegal in state {state}; history {history}")
        self.history = history


@dataclass(frozen=True)
class Event:
    """A stimulus: `kind` plus optional data (reason, message, exit code, ...)."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Instruction:
    """What the shell must do: `kind` (e.g. "update", "stop", "cleanup") plus data."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


Table = dict[tuple[str, str], tuple[str | None, tuple[str, ...]]]


class Lifecycle:
    """A state machine driven by a Table; `None` as next state means "stay"."""

    table: Table = {}
    what = "lifecycle"

    def __init__(self, state: str) -> None:
        self.state = state
        self.history: list[tuple[str, str]] = []

    def handle(self, event: Event) -> list[Instruction]:
        """Apply `event`; return the instructions for the shell. Raises IllegalTransition."""
        key = (self.state, event.kind)
        if key not in self.table:
            key = ("*", event.kind)
        if key not in self.table:
            raise IllegalTransition(self.what, self.state, event.kind, list(self.history))
        nxt, kinds = self.table[key]
        self.history.append((self.state, event.kind))
        prev, self.state = self.state, (nxt or self.state)
        return [self.instruction(k, prev, event) for k in kinds]

    def instruction(self, kind: str, prev: str, event: Event) -> Instruction:
        return Instruction(kind, dict(event.data))


# ---- a task on an agent ------------------------------------------------
# Events: starting (sandbox fetched, container being created), running
# (container up), exited (code, oom), launch_failed, invalid, kill, stopped
# (the container ended after a kill), lost (agent restart found nothing).
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
for _s in TERMINAL:
    for _e in ("kill", "exited", "stopped", "running", "starting", "launch_failed", "lost"):
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
        return out

    def instruction(self, kind: str, prev: str, event: Event) -> Instruction:
        data = dict(event.data)
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


# ---- a framework on the master ------------------------------------------
FRAMEWORK_TABLE: Table = {
    ("NEW", "subscribe"): ("CONNECTED", ("persist", "subscribed", "activate")),
    ("RECOVERED", "subscribe"): ("CONNECTED", ("persist", "subscribed", "activate")),
    ("CONNECTED", "subscribe"): ("CONNECTED", ("fail_over_stream", "persist", "subscribed")),
    ("DISCONNECTED", "subscribe"): ("CONNECTED", ("persist", "subscribed", "activate", "cancel_failover")),
    ("CONNECTED", "stream_closed"): ("DISCONNECTED", ("deactivate", "rescind_offers", "start_failover")),
    ("CONNECTED", "teardown"): ("REMOVED", ("close_stream", "remove")),
    ("DISCONNECTED", "teardown"): ("REMOVED", ("remove",)),
    ("RECOVERED", "teardown"): ("REMOVED", ("remove",)),
    ("DISCONNECTED", "failover_timeout"): ("REMOVED", ("remove",)),
    ("RECOVERED", "failover_timeout"): ("REMOVED", ("remove",)),
    ("DISCONNECTED", "stream_closed"): (None, ()),
    ("REMOVED", "stream_closed"): (None, ()),
    ("REMOVED", "teardown"): (None, ()),
    ("REMOVED", "failover_timeout"): (None, ()),
    ("CONNECTED", "failover_timeout"): (None, ()),
}


class FrameworkLifecycle(Lifecycle):
    """A framework's registration: NEW/RECOVERED -> CONNECTED <-> DISCONNECTED -> REMOVED."""

    table = FRAMEWORK_TABLE
    what = "framework"


# ---- an agent's link to the master ---------------------------------------
AGENT_TABLE: Table = {
    ("NEW", "register"): ("CONNECTED", ("add", "registered")),
    ("NEW", "reregister"): ("CONNECTED", ("add", "reconcile", "registered")),
    ("CONNECTED", "reregister"): ("CONNECTED", ("reconcile", "registered")),
    ("DISCONNECTED", "reregister"): ("CONNECTED", ("activate", "reconcile", "registered")),
    ("CONNECTED", "disconnected"): ("DISCONNECTED", ("deactivate", "rescind_offers", "start_timeout")),
    ("CONNECTED", "unreachable"): ("REMOVED", ("remove",)),   # pings unanswered: Mesos marks it unreachable
    ("DISCONNECTED", "timeout"): ("REMOVED", ("remove",)),
    ("DISCONNECTED", "disconnected"): (None, ()),
    ("CONNECTED", "timeout"): (None, ()),
    ("REMOVED", "timeout"): (None, ()),
    ("REMOVED", "disconnected"): (None, ()),
    ("REMOVED", "unreachable"): (None, ()),
}


class AgentLinkLifecycle(Lifecycle):
    """An agent as the master sees it: NEW -> CONNECTED <-> DISCONNECTED -> REMOVED (tasks lost)."""

    table = AGENT_TABLE
    what = "agent"
