"""What happens to a task on an agent (the events its runner and the master's messages produce),
and what the agent must do about it (the instructions `TaskLifecycle` returns to `AgentCore`).

A `message` or `reason` left None takes the lifecycle's default for the
transition (task_lifecycle.py); one given, even empty, is sent as is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# ---- events -------------------------------------------------------------


@dataclass(frozen=True)
class TaskStarting:
    """The sandbox is fetched and the container (or process) is being created."""


@dataclass(frozen=True)
class TaskContainerUp:
    """The container (or process) runs; `container_status` carries its network addresses."""

    container_status: dict[str, Any] | None = None


@dataclass(frozen=True)
class TaskExited:
    """The container ended by itself: code 0 finishes the task, anything else (or `oom`) fails it."""

    code: int | None
    oom: bool = False
    message: str | None = None


@dataclass(frozen=True)
class TaskLaunchFailed:
    reason: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class TaskInvalid:
    """The task cannot run as given (a bad volume, no command)."""

    message: str | None = None


@dataclass(frozen=True)
class TaskKillRequested:
    """The master (or a framework shutdown) asks for the task to stop within `grace_s`."""

    grace_s: float


@dataclass(frozen=True)
class TaskStopped:
    """The container ended after a kill."""

    message: str | None = None


@dataclass(frozen=True)
class TaskLost:
    """The container is gone for a reason of the agent's (restart found nothing, the engine lost it)."""

    reason: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class TaskReported:
    """The task's custom (or group) executor sent its status itself: `status` is that TaskStatus, whose
    state becomes the task's and which is sent on as the executor wrote it (its own uuid)."""

    status: dict[str, Any]


TaskEvent = (TaskStarting | TaskContainerUp | TaskExited | TaskLaunchFailed | TaskInvalid | TaskKillRequested
             | TaskStopped | TaskLost | TaskReported)
TASK_EVENTS: tuple[type, ...] = (TaskStarting, TaskContainerUp, TaskExited, TaskLaunchFailed, TaskInvalid,
                                 TaskKillRequested, TaskStopped, TaskLost, TaskReported)

# ---- instructions -------------------------------------------------------


@dataclass(frozen=True)
class SendTaskStatus:
    """A status update to send (with a uuid, resent until acknowledged).

    `reported` is an executor's own TaskStatus (TaskReported), sent on as it
    is rather than built from the other fields.
    """

    state: str
    reason: str | None = None
    message: str = ""
    container_status: dict[str, Any] | None = None
    reported: dict[str, Any] | None = None


@dataclass(frozen=True)
class StopTask:
    """Ask the runner to stop the container: SIGTERM, SIGKILL after `grace_s`."""

    grace_s: float


@dataclass(frozen=True)
class CancelLaunch:
    """Stop a launch still under way (fetching, creating)."""


@dataclass(frozen=True)
class CleanUpTask:
    """The task ended: let the runner release what it holds; the sandbox stays for the GC."""
