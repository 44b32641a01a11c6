"""The agent's runner: each task to the runner of its kind (custom executor, task group, Docker, process).

Separate from task_runner.py, which the kinds build on, so that no module
imports one that imports it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scylla_singa.mesos.api.container_info import runs_in_docker
from .executor_runner import ExecutorRunner
from .task_events import TaskLaunchFailed
from .task_group_runner import TaskGroupRunner
from .task_runner import AgentTask, Emit, TaskRunner

if TYPE_CHECKING:
    from .agent_core import AgentCore


class CompositeRunner(TaskRunner):
    """Picks the runner of each task by what it asks for.

    Tasks with a custom ExecutorInfo (their own, or their group's) go to the
    executor runner, the other tasks of a group to the task-group runner (both run their processes and containers
    on the plain runners below); a DOCKER container, or a MESOS one with a
    Docker image, to the Docker runner; the rest (no container, or a MESOS one
    without image) to the process runner.
    """

    def __init__(self, docker: TaskRunner | None, process: TaskRunner) -> None:
        self.docker = docker
        self.process = process
        self.groups = TaskGroupRunner(self.plain)
        self.executors = ExecutorRunner(self.plain)

    def attach(self, core: AgentCore, endpoint: str) -> None:
        """Give the executor and task-group runners the agent they serve (its id, its HTTP address
        `endpoint` for executors, the master link)."""
        self.groups.core = self.executors.core = core
        self.executors.endpoint = endpoint

    def plain(self, task: AgentTask) -> TaskRunner:
        in_docker = runs_in_docker(task.info.get("container"))
        if in_docker and self.docker is None:
            raise RuntimeError("this agent has no Docker engine (start it with --docker-host)")
        return self.docker if in_docker else self.process

    def pick(self, task: AgentTask) -> TaskRunner:
        if task.on_custom_executor:
            return self.executors
        return self.groups if task.group is not None else self.plain(task)

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        try:
            runner = self.pick(task)
        except RuntimeError as exc:
            emit(TaskLaunchFailed(message=str(exc)))
            return
        await runner.launch(task, emit)

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        await self.pick(task).kill(task, grace_s, emit)

    async def cleanup(self, task: AgentTask) -> None:
        await self.pick(task).cleanup(task)

    async def recover(self, task: AgentTask, emit: Emit) -> None:
        await self.pick(task).recover(task, emit)

    def acknowledged(self, task: AgentTask, uuid_b64: str) -> None:
        self.pick(task).acknowledged(task, uuid_b64)

    def running_executor(self, framework_id: str, executor_id: str) -> str | None:
        return self.executors.running_executor(framework_id, executor_id)

    def shutdown_executor(self, framework_id: str, executor_id: str) -> None:
        self.executors.shutdown_executor(framework_id, executor_id)

    def shutdown_framework(self, framework_id: str) -> None:
        self.executors.shutdown_framework(framework_id)

    def framework_message(self, framework_id: str, executor_id: str, data: str) -> bool:
        return self.executors.framework_message(framework_id, executor_id, data)

    async def shutdown(self) -> None:
        await self.executors.shutdown()
        for r in (self.docker, self.process):
            if r is not None:
                await r.shutdown()
