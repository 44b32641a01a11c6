"""The agent's runner: each task to the runner of its kind (task group, Docker, process).

Separate from task_runner.py, which the kinds build on, so that no module
imports one that imports it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scylla_singa.common.transition_table import Event
from .task_group_runner import TaskGroupRunner
from .task_runner import AgentTask, Emit, TaskRunner

if TYPE_CHECKING:
    from .agent_core import AgentCore


class CompositeRunner(TaskRunner):
    """Picks the runner of each task by what it asks for.

    Tasks of a group go to the task-group runner (which runs each of them on
    the plain runners below); a DOCKER container to the Docker runner; the
    rest (no container, or a MESOS one without image) to the process runner.
    """

    def __init__(self, docker: TaskRunner | None, process: TaskRunner) -> None:
        self.docker = docker
        self.process = process
        self.groups = TaskGroupRunner(self.plain)

    def attach(self, core: AgentCore) -> None:
        """Give the task-group runner the agent it serves (it tells the master when a group's executor ends)."""
        self.groups.core = core

    def plain(self, task: AgentTask) -> TaskRunner:
        in_docker = (task.info.get("container") or {}).get("type") == "DOCKER"
        if in_docker and self.docker is None:
            raise RuntimeError("this agent has no Docker engine (start it with --docker-host)")
        return self.docker if in_docker else self.process

    def pick(self, task: AgentTask) -> TaskRunner:
        return self.groups if task.group is not None else self.plain(task)

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        try:
            runner = self.pick(task)
        except RuntimeError as exc:
            emit(Event("launch_failed", {"message": str(exc)}))
            return
        await runner.launch(task, emit)

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        await self.pick(task).kill(task, grace_s, emit)

    async def cleanup(self, task: AgentTask) -> None:
        await self.pick(task).cleanup(task)

    async def recover(self, task: AgentTask, emit: Emit) -> None:
        await self.pick(task).recover(task, emit)

    async def shutdown(self) -> None:
        for r in (self.docker, self.process):
            if r is not None:
                await r.shutdown()
