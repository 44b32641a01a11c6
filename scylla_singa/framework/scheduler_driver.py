"""pymesos's scheduler driver, with RECONCILE calls that name each task's agent.

pymesos 0.3.x builds a RECONCILE call from the task ids only and drops the
`agent_id` its caller passes. Mesos answers an explicit reconciliation per
agent: a task it does not know, on an agent that has not re-registered yet
after a master failover, gets no answer until that agent comes back (or is
given up), so the framework hears the task's real state. Without the agent
id, the master cannot tell that case apart and answers TASK_LOST ("task is
unknown") at once, and the framework restarts a job whose processes are all
still running. That is what a failover under load did to our jobs on both
our master and Apache Mesos: the framework re-subscribed to the new leader
before the agents re-registered.
"""
from __future__ import annotations

from typing import Any

from pymesos import MesosSchedulerDriver


def reconcile_call(framework_id: str, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """The v1 RECONCILE call for `tasks` (each a dict with `task_id` and, ideally, `agent_id`)."""
    asked = []
    for task in tasks:
        item: dict[str, Any] = {"task_id": task["task_id"]}
        if task.get("agent_id"):
            item["agent_id"] = task["agent_id"]
        asked.append(item)
    return {"type": "RECONCILE", "framework_id": {"value": framework_id}, "reconcile": {"tasks": asked}}


class SchedulerDriver(MesosSchedulerDriver):
    """The driver the framework runs: pymesos's, with reconciliation by task and agent."""

    def reconcileTasks(self, tasks: list[dict[str, Any]]) -> None:  # noqa: N802 - pymesos's name
        """Ask the master for the latest state of `tasks` (all of the framework's if empty)."""
        if not self.connected:
            return
        framework_id = self.framework_id
        assert framework_id, "a connected driver has a framework id"
        self._send(reconcile_call(framework_id, tasks))
