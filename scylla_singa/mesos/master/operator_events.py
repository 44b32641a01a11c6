"""The operator API's event stream: who is subscribed, and the events the master's changes make.

The Master calls one method per change (a task added or updated, an agent
or a framework added, updated or removed); each builds the v1 Event only
when someone listens, so the master pays one attribute test per change
otherwise (issue 17's budget). Subscribers are outboxes (event_stream.py)
in the format each chose; `send` never blocks.

Events as Mesos 1.12 sends them (tests/fixtures/apache_mesos/operator/
SUBSCRIBE.events.json): SUBSCRIBED with the whole GET_STATE and the
heartbeat interval, then TASK_ADDED {task}, TASK_UPDATED {framework_id,
status, state}, AGENT_ADDED {agent}, AGENT_REMOVED {agent_id},
FRAMEWORK_ADDED / FRAMEWORK_UPDATED {framework}, FRAMEWORK_REMOVED
{framework_info}, and HEARTBEAT.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import operator_v1

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import AgentRec, FrameworkRec, Outbox, TaskRec


class OperatorEvents:
    """The operator event subscribers of one Master."""

    def __init__(self, master: Master) -> None:
        self.m = master
        self.subscribers: list[Outbox] = []

    def subscribe(self, outbox: Outbox) -> None:
        """Add a subscriber: it gets SUBSCRIBED (the whole state) and a first HEARTBEAT at once."""
        outbox.send({"type": "SUBSCRIBED", "subscribed": {
            "get_state": operator_v1.get_state(self.m),
            "heartbeat_interval_seconds": self.m.cfg.heartbeat_interval}})
        outbox.send({"type": "HEARTBEAT"})
        self.subscribers.append(outbox)

    def unsubscribe(self, outbox: Outbox) -> None:
        if outbox in self.subscribers:
            self.subscribers.remove(outbox)

    def close(self) -> None:
        for outbox in self.subscribers:
            outbox.close()
        self.subscribers.clear()

    def _send(self, event: dict[str, Any]) -> None:
        for outbox in self.subscribers:
            outbox.send(event)

    def heartbeat(self) -> None:
        if self.subscribers:
            self._send({"type": "HEARTBEAT"})

    # ---- changes of the master's state ------------------------------------------
    def task_added(self, task: TaskRec) -> None:
        if self.subscribers:
            self._send({"type": "TASK_ADDED", "task_added": {"task": operator_v1.task(task)}})

    def task_updated(self, task: TaskRec, status: dict[str, Any]) -> None:
        if self.subscribers:
            self._send({"type": "TASK_UPDATED", "task_updated": {
                "framework_id": {"value": task.framework_id}, "status": status, "state": task.state}})

    def agent_added(self, agent: AgentRec) -> None:
        if self.subscribers:
            self._send({"type": "AGENT_ADDED", "agent_added": {"agent": operator_v1.agent(self.m, agent)}})

    def agent_removed(self, agent_id: str) -> None:
        if self.subscribers:
            self._send({"type": "AGENT_REMOVED", "agent_removed": {"agent_id": {"value": agent_id}}})

    def framework_added(self, fw: FrameworkRec) -> None:
        if self.subscribers:
            self._send({"type": "FRAMEWORK_ADDED", "framework_added": {"framework": operator_v1.framework_event(fw)}})

    def framework_updated(self, fw: FrameworkRec) -> None:
        if self.subscribers:
            self._send({"type": "FRAMEWORK_UPDATED", "framework_updated": {
                "framework": operator_v1.framework_event(fw)}})

    def framework_removed(self, fw: FrameworkRec) -> None:
        if self.subscribers:
            self._send({"type": "FRAMEWORK_REMOVED", "framework_removed": {"framework_info": fw.info}})
