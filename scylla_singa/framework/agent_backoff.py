"""Agents the framework stops placing on for a while, after a task failed there for the agent's own fault.

Why: Apache Mesos keeps offering an agent whose Docker engine is dead (the
agent itself is alive and healthy to the master), and every task placed
there fails at once (`REASON_CONTAINER_LAUNCH_FAILED`, "Cannot connect to
the Docker daemon"); a gang restarted onto it burns a restart each time
until the job fails. Our own agent reports itself unhealthy instead, but a
framework cannot rely on that. So a failure that says the agent could not
run a container (see `blames_agent`) puts that agent aside: its offers are
declined and placement does not see it, for 30 s after the first such
failure, doubling with each further one (at most 5 minutes), until a task
of ours runs there again. Pure: the core holds one and feeds it the time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .model import TaskRecord

# What an agent says when it could not start or keep a container, whatever the task did.
_AGENT_REASONS = frozenset({"REASON_CONTAINER_LAUNCH_FAILED", "REASON_EXECUTOR_TERMINATED",
                            "REASON_EXECUTOR_REGISTRATION_TIMEOUT"})
# `docker run` itself failed (the Docker CLI's own exit code 125: the daemon went away or refused);
# Mesos's Docker executor reports it as an exit of the container, with no reason.
_DOCKER_RUN_FAILED = re.compile(r"exited with status 125\b")


def blames_agent(task: TaskRecord) -> bool:
    """Whether `task` ended because its agent could not run containers (not because of the task)."""
    if task.state not in ("TASK_FAILED", "TASK_LOST", "TASK_ERROR"):
        return False
    return task.reason in _AGENT_REASONS or bool(_DOCKER_RUN_FAILED.search(task.message))


@dataclass
class AgentBackoff:
    """Which agents are set aside until when, and why."""

    base_s: float = 30.0
    max_s: float = 300.0
    failures: dict[str, int] = field(default_factory=dict)
    until: dict[str, float] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)

    def failed(self, agent_id: str, hostname: str, now: float, reason: str) -> float:
        """Record a failure the agent is to blame for; returns how long it is set aside (s)."""
        n = self.failures.get(agent_id, 0) + 1
        self.failures[agent_id] = n
        delay = min(self.max_s, self.base_s * 2 ** (n - 1))
        self.until[agent_id] = max(self.until.get(agent_id, 0.0), now + delay)
        self.why[agent_id] = f"{hostname}: {reason}"
        return delay

    def succeeded(self, agent_id: str) -> None:
        """A task runs there again: the agent is trusted again."""
        self.failures.pop(agent_id, None)
        self.until.pop(agent_id, None)
        self.why.pop(agent_id, None)

    def avoided(self, now: float) -> dict[str, float]:
        """Agent id -> seconds it stays set aside, for the agents set aside at `now`."""
        return {a: t - now for a, t in self.until.items() if t > now}

    def explain(self, now: float) -> str:
        """One line naming the agents set aside and why (empty when none is)."""
        parts = [f"{self.why[a]} (for {left:.0f}s more)" for a, left in sorted(self.avoided(now).items())]
        return ("not placing on agents whose containers failed to run: " + "; ".join(parts)) if parts else ""
