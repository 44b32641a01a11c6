"""What an agent runs tasks with: the TaskRunner interface and the per-task record it works on.

A runner turns a task into events for the task's lifecycle (task_events.py:
`TaskStarting`, `TaskContainerUp`, `TaskExited`, `TaskLaunchFailed`,
`TaskInvalid`, `TaskStopped`, `TaskLost`) by calling `emit`; it never sends status updates itself. `launch` runs for
the task's whole life (the agent cancels it to abandon a launch).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.mesos.api.fields import value
from .task_events import TaskEvent, TaskLost
from .task_lifecycle import TaskLifecycle

Emit = Callable[[TaskEvent], None]


@dataclass
class AgentTask:
    """A task on an agent: its TaskInfo, lifecycle, sandbox and unacknowledged status updates."""

    framework_id: str
    framework: dict[str, Any]
    info: dict[str, Any]
    lifecycle: TaskLifecycle
    container_id: str
    sandbox: Path | None = None
    pending: list[dict[str, Any]] = field(default_factory=list)   # status updates awaiting ACK, oldest first
    last_status: dict[str, Any] | None = None
    last_sent: float = 0.0
    send_count: int = 0
    finished_at: float | None = None
    launch: asyncio.Task | None = None
    handle: Any = None          # runner-private (container, process, timer)
    kill_requested: bool = False
    agent_id: str = ""
    statuses: list[dict[str, Any]] = field(default_factory=list)  # the last updates sent, oldest first
    pid: int | None = None      # its main process, when the runner knows it (container statistics)
    group: dict[str, Any] | None = None   # the default executor's ExecutorInfo when part of a task group
    executor_run: str = ""      # the container id of its executor (tasks of a group or custom executor share it)
    executor_uuids: set[str] = field(default_factory=set)   # updates its custom executor sent, not yet acked
    group_tasks: tuple[str, ...] = ()   # the ids of every task of its group (itself included)
    volume_mounts: list[Any] = field(default_factory=list)   # its persistent volumes (persistent_volumes.py)
    terminal: Any = None   # a process task's terminal (terminal.Terminal) when it asked for one (tty_info)

    @property
    def task_id(self) -> str:
        return value(self.info.get("task_id")) or ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.framework_id, self.task_id)

    @property
    def state(self) -> str:
        return self.lifecycle.state

    @property
    def executor_info(self) -> dict[str, Any] | None:
        """The ExecutorInfo it runs under: its framework's custom executor, or its group's default one
        (None: a command task, its own executor)."""
        return self.info.get("executor") or self.group

    @property
    def on_custom_executor(self) -> bool:
        """Whether its framework's own (CUSTOM) executor runs it: named in its TaskInfo, or its group's."""
        return bool(self.info.get("executor")) or (self.group is not None and self.group.get("type") == "CUSTOM")

    @property
    def in_default_group(self) -> bool:
        """Whether it is a task of a group that the agent's default executor runs (a directory and a process of
        its own inside the group's run); a group on a custom executor is that executor's business."""
        return self.group is not None and not self.on_custom_executor

    @property
    def executor_id(self) -> str:
        """Its executor's id; a command task's executor has the task's id (as in Mesos)."""
        executor = self.executor_info
        return value((executor or {}).get("executor_id")) or self.task_id

    def to_json(self) -> dict[str, Any]:
        """What survives an agent restart."""
        return {"framework_id": self.framework_id, "framework": self.framework, "task": self.info,
                "state": self.state, "container_id": self.container_id,
                "sandbox": str(self.sandbox) if self.sandbox else None, "pending": self.pending,
                "last_status": self.last_status, "finished_at": self.finished_at, "group": self.group,
                "executor_run": self.executor_run, "group_tasks": list(self.group_tasks)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentTask:
        info = data["task"]
        task = cls(data["framework_id"], data.get("framework") or {}, info,
                   TaskLifecycle(value(info.get("task_id")) or "", data.get("state", "TASK_STAGING")),
                   data.get("container_id") or "", Path(data["sandbox"]) if data.get("sandbox") else None)
        task.pending = list(data.get("pending") or [])
        task.last_status = data.get("last_status")
        task.statuses = [task.last_status] if task.last_status else []
        task.finished_at = data.get("finished_at")
        task.group = data.get("group")
        task.executor_run = data.get("executor_run") or ""
        task.group_tasks = tuple(data.get("group_tasks") or ())
        return task


class TaskRunner(ABC):
    """Runs tasks of one kind (Docker, plain process, simulated)."""

    needs_sandbox = True

    @abstractmethod
    async def launch(self, task: AgentTask, emit: Emit) -> None:
        """Start the task and follow it to its end, emitting lifecycle events."""

    @abstractmethod
    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        """Stop the task (SIGTERM, then SIGKILL after grace); the end is reported by `launch` or `TaskStopped`."""

    async def cleanup(self, task: AgentTask) -> None:
        """Remove what the task left (its container); the sandbox stays for the garbage collector."""

    async def recover(self, task: AgentTask, emit: Emit) -> None:
        """After an agent restart: follow the task again, or emit `TaskLost`/`TaskExited` if it ended meanwhile."""
        emit(TaskLost(reason="REASON_AGENT_RESTARTED",
                     message="The agent restarted and this kind of task does not survive that"))

    def acknowledged(self, task: AgentTask, uuid_b64: str) -> None:
        """The framework acknowledged an update the task's own executor sent (runners with executors tell it)."""

    def running_executor(self, framework_id: str, executor_id: str) -> str | None:
        """The container id of a custom executor running here (None: none runs)."""
        return None

    def shutdown_executor(self, framework_id: str, executor_id: str) -> None:
        """The scheduler's SHUTDOWN of one executor (runners without executors have none)."""

    def shutdown_framework(self, framework_id: str) -> None:
        """The framework is gone: end its executors (its tasks are killed through their lifecycles)."""

    def framework_message(self, framework_id: str, executor_id: str, data: str) -> bool:
        """A scheduler's MESSAGE for an executor; False when no such executor listens here."""
        return False

    async def shutdown(self) -> None:
        """Kill everything this runner started (used when an embedded cluster stops)."""
