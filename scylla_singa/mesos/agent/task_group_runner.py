"""Task groups (LAUNCH_GROUP) with the semantics of Mesos's default executor.

A group's tasks start together, each with its own status updates (their
executor id is the group's), and die together: when one fails or is
killed, the others are killed (TASK_KILLED); one that finishes with 0 leaves
the others running. When every task of the group has ended, the group's
executor is gone and the master is told (EXECUTOR_EXITED), as when Mesos's
default executor exits. Each task runs in its own sandbox inside the
executor's (`<executor sandbox>/tasks/<task id>`); processes share the
host's network namespace, and so do containers of a group (they run with
the host's network).

The tasks themselves run on the plain runners (process or Docker), so
everything those do (fetching, logs, limits, kills) holds for each task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from .task_events import TaskKillRequested
from .task_runner import AgentTask, Emit, TaskRunner

if TYPE_CHECKING:
    from .agent_core import AgentCore


@dataclass
class TaskGroup:
    """The tasks of one group on this agent, and how far its end has come."""

    members: dict[str, tuple[AgentTask, Emit]] = field(default_factory=dict)
    stopping: bool = False      # one task failed or was killed: the others are being killed
    ended: set[str] = field(default_factory=set)


class TaskGroupRunner(TaskRunner):
    """Tasks launched in a group (AgentTask.group set). `run_plain(task)` runs one task of it."""

    def __init__(self, run_plain: Callable[[AgentTask], TaskRunner]) -> None:
        self.run_plain = run_plain
        self.core: AgentCore | None = None   # set by attach(): the master is told when a group ends
        self.groups: dict[tuple[str, str], TaskGroup] = {}

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        group = self.groups.setdefault((task.framework_id, task.executor_id), TaskGroup())
        group.members[task.task_id] = (task, emit)
        if group.stopping:   # another task of the group ended badly before this one started
            emit(TaskKillRequested(grace_s=0.0))
            return
        await self.run_plain(task).launch(task, emit)

    async def cleanup(self, task: AgentTask) -> None:
        """A task of the group ended (whatever way: the lifecycle cleans up after every end)."""
        key = (task.framework_id, task.executor_id)
        group = self.groups.get(key)
        if group is not None:
            group.ended.add(task.task_id)
            if task.state != "TASK_FINISHED" and not group.stopping:
                self._stop_others(group, task)
            if group.ended >= set(group.members) | set(task.group_tasks):
                del self.groups[key]
                if self.core is not None:
                    failed = any(t.state != "TASK_FINISHED" for t, _ in group.members.values())
                    self.core.executor_exited(key[0], key[1], 1 if failed else 0)
        await self.run_plain(task).cleanup(task)

    def _stop_others(self, group: TaskGroup, cause: AgentTask) -> None:
        """Kill every other live task of the group, each through its own lifecycle (TASK_KILLING/KILLED)."""
        group.stopping = True
        for task, emit in list(group.members.values()):
            if task is not cause and task.state not in TERMINAL_TASK_STATES and task.task_id not in group.ended:
                emit(TaskKillRequested(grace_s=_grace(task)))

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        group = self.groups.get((task.framework_id, task.executor_id))
        if group is not None and not group.stopping:
            self._stop_others(group, task)
        await self.run_plain(task).kill(task, grace_s, emit)

    async def recover(self, task: AgentTask, emit: Emit) -> None:
        await self.run_plain(task).recover(task, emit)

    async def shutdown(self) -> None:
        await asyncio.sleep(0)   # the plain runners kill every task they run


def _grace(task: AgentTask) -> float:
    ns = ((task.info.get("kill_policy") or {}).get("grace_period") or {}).get("nanoseconds")
    try:
        return max(0.0, int(ns) / 1e9) if ns is not None else 3.0
    except (TypeError, ValueError):
        return 3.0
