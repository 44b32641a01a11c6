"""Simulated tasks, for scale tests: nothing runs.

`sleep N` finishes after N seconds, `exit K` ends at once with code K
(0 -> FINISHED, else FAILED), anything else runs until killed.
"""

from __future__ import annotations

import asyncio
import re

from scylla_singa.mesos.api.protocol import container_status
from .task_events import TaskContainerUp, TaskExited, TaskStarting, TaskStopped
from .task_runner import AgentTask, Emit, TaskRunner

_SLEEP = re.compile(r"^\s*sleep\s+(\d+(?:\.\d+)?)\s*$")
_EXIT = re.compile(r"^\s*exit\s+(-?\d+)\s*$")


class SimulatedRunner(TaskRunner):
    """Runs nothing; follows the task's command text (see module docstring)."""

    needs_sandbox = False

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        emit(TaskStarting())
        emit(TaskContainerUp(container_status(task.container_id, None, None)))
        command = (task.info.get("command") or {}).get("value") or ""
        if m := _EXIT.match(command):
            code = int(m.group(1))
        elif m := _SLEEP.match(command):
            await asyncio.sleep(float(m.group(1)))
            code = 0
        else:
            await asyncio.Event().wait()
            return
        emit(TaskExited(code, message=f"Command exited with status {code}"))

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        if task.launch is not None:
            task.launch.cancel()
        emit(TaskStopped("Command terminated with signal SIGTERM"))
