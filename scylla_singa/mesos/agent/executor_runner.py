"""A framework's own (CUSTOM) executors on this agent, driven through the v1 executor HTTP API.

How Mesos does it, and so do we: the first task with a given ExecutorInfo
starts the executor (its URIs fetched into the executor's sandbox, its
command run as a process, or in a container when the ExecutorInfo has a
DOCKER or MESOS-with-image one, on the host's network so it reaches the
agent), with the environment mesos-go and libmesos read (MESOS_FRAMEWORK_ID,
MESOS_EXECUTOR_ID, MESOS_AGENT_ENDPOINT, MESOS_DIRECTORY, MESOS_SANDBOX,
MESOS_CHECKPOINT, ...). The executor SUBSCRIBEs to `/api/v1/executor`
(executor_api.py) and gets SUBSCRIBED, then one LAUNCH per task, or one
LAUNCH_GROUP per task group; more tasks and groups for the same executor are
launched on it while it runs. Its UPDATE calls
become the tasks' status updates (the `TaskReported` event of the task
lifecycle), sent on with the executor's own uuid; when the framework
acknowledges one, the executor gets ACKNOWLEDGED. KILL and SHUTDOWN go to
the executor; when its process ends, the tasks it left unfinished fail with
REASON_EXECUTOR_TERMINATED and the master is told (EXECUTOR_EXITED).

The executor itself is run as a task of the plain runners (process or
Docker) that nobody outside sees: one way to start, follow and stop things.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.container_info import SANDBOX_MOUNT, docker_equivalent, runs_in_docker
from scylla_singa.mesos.api.fields import mesos_duration, value
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from .fetcher import FetchError, fetch_all
from .task_events import (TaskEvent, TaskExited, TaskInvalid, TaskLaunchFailed, TaskLost, TaskReported,
                          TaskStopped)
from .task_lifecycle import TaskLifecycle
from .task_runner import AgentTask, Emit, TaskRunner

if TYPE_CHECKING:
    from .agent_core import AgentCore

log = logging.getLogger(__name__)
JsonDict = dict[str, Any]
RECOVERY_TIMEOUT_S = 15 * 60.0   # how long a checkpointing executor may try to subscribe again
SUBSCRIPTION_BACKOFF_MAX_S = 2.0


@dataclass
class CustomExecutor:
    """One running executor: its ExecutorInfo, where it runs, its tasks, and its event stream."""

    framework_id: str
    executor_id: str
    info: JsonDict
    framework: JsonDict
    run_id: str
    sandbox: Path
    process: AgentTask                 # the executor run as a task of the plain runners
    state: str = "LAUNCHING"           # LAUNCHING -> SUBSCRIBED (<-> DISCONNECTED) -> TERMINATED
    tasks: dict[str, tuple[AgentTask, Emit]] = field(default_factory=dict)
    launched: set[str] = field(default_factory=set)   # tasks it was sent LAUNCH or LAUNCH_GROUP for
    stream: Any = None                 # an Outbox while subscribed
    token: str = ""                    # MESOS_EXECUTOR_AUTHENTICATION_TOKEN: only it may call for this executor
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class ExecutorRunner(TaskRunner):
    """Tasks with an ExecutorInfo (CUSTOM). `run_plain(task)` is the runner for the executor itself."""

    def __init__(self, run_plain: Callable[[AgentTask], TaskRunner], shutdown_grace_s: float = 5.0) -> None:
        self.run_plain = run_plain
        self.shutdown_grace_s = shutdown_grace_s
        self.core: AgentCore | None = None      # set by attach(): the agent's id, address and master link
        self.endpoint = "127.0.0.1:5051"          # the agent's HTTP address (MESOS_AGENT_ENDPOINT)
        self.executors: dict[tuple[str, str], CustomExecutor] = {}
        self._bg: set[asyncio.Task] = set()

    def running_executor(self, framework_id: str, executor_id: str) -> str | None:
        ex = self.executors.get((framework_id, executor_id))
        return ex.run_id if ex is not None and ex.state != "TERMINATED" else None

    # ---- tasks -----------------------------------------------------------------
    async def launch(self, task: AgentTask, emit: Emit) -> None:
        key = (task.framework_id, task.executor_id)
        ex = self.executors.get(key)
        if ex is None or ex.state == "TERMINATED":
            ex = self._new_executor(task)
            self.executors[key] = ex   # before any await: the next task for it joins this one
            ex.tasks[task.task_id] = (task, emit)
            await self._start(ex)
            return
        ex.tasks[task.task_id] = (task, emit)
        if ex.state == "SUBSCRIBED":
            self._send_launch(ex, task)

    def _new_executor(self, task: AgentTask) -> CustomExecutor:
        info = task.executor_info or {}
        sandbox = task.sandbox
        token = secrets.token_urlsafe(32)
        process = AgentTask(task.framework_id, task.framework, self._process_info(task, info, sandbox, token),
                            TaskLifecycle(f"executor:{task.executor_id}"), task.executor_run, sandbox)
        process.agent_id = task.agent_id
        return CustomExecutor(task.framework_id, task.executor_id,
                              {**info, "framework_id": {"value": task.framework_id}},
                              task.framework, task.executor_run, sandbox, process, token=token)

    async def _start(self, ex: CustomExecutor) -> None:
        """Fetch the executor's URIs into its sandbox and run it; a failed fetch fails its tasks."""
        try:
            roots = self.core.fetcher_roots if self.core is not None else ()
            await fetch_all((ex.info.get("command") or {}).get("uris") or [], ex.sandbox, None, roots)
        except FetchError as exc:
            ex.state = "TERMINATED"
            del self.executors[(ex.framework_id, ex.executor_id)]
            for _, emit in list(ex.tasks.values()):
                emit(TaskLaunchFailed(reason="REASON_CONTAINER_LAUNCH_FAILED",
                                      message=f"Failed to fetch the executor's URIs: {exc}"))
            return
        self._spawn(self._run_executor(ex))

    def _process_info(self, task: AgentTask, info: JsonDict, sandbox: Path, token: str) -> JsonDict:
        """The executor as a TaskInfo for the plain runners: its command, container and the environment
        Mesos gives executors (the host's network, so MESOS_AGENT_ENDPOINT is reachable)."""
        command = dict(info.get("command") or {})
        container = info.get("container")
        in_container = runs_in_docker(container)
        directory = SANDBOX_MOUNT if in_container else str(sandbox)
        env = {"MESOS_FRAMEWORK_ID": task.framework_id, "MESOS_EXECUTOR_ID": task.executor_id,
               "MESOS_AGENT_ENDPOINT": self.endpoint, "MESOS_SLAVE_ID": task.agent_id, "MESOS_AGENT_ID": task.agent_id,
               "MESOS_DIRECTORY": directory, "MESOS_SANDBOX": directory,
               "MESOS_CHECKPOINT": "1" if task.framework.get("checkpoint") else "0",
               "MESOS_RECOVERY_TIMEOUT": mesos_duration(RECOVERY_TIMEOUT_S),
               "MESOS_SUBSCRIPTION_BACKOFF_MAX": mesos_duration(SUBSCRIPTION_BACKOFF_MAX_S),
               "MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": mesos_duration(self.shutdown_grace_s),
               "MESOS_HTTP_COMMAND_EXECUTOR": "0",
               # as Mesos's --authenticate_http_executors: the executor's calls carry `Authorization: Bearer`
               "MESOS_EXECUTOR_AUTHENTICATION_TOKEN": token}
        given = [v for v in (command.get("environment") or {}).get("variables") or [] if isinstance(v, dict)]
        command["environment"] = {"variables": [{"name": k, "value": v} for k, v in env.items()] + given}
        out: JsonDict = {"task_id": {"value": f"executor:{task.executor_id}"}, "name": str(info.get("name") or ""),
                         "command": command, "resources": info.get("resources") or []}
        if in_container:
            out["container"] = _on_host_network(container)
        return out

    async def _run_executor(self, ex: CustomExecutor) -> None:
        """Run the executor to its end; then fail what it left unfinished and tell the master."""
        ends: list[TaskEvent] = []   # how the executor's process ended (the latest code and message count)

        def watch(event: TaskEvent) -> None:
            if isinstance(event, (TaskExited, TaskLaunchFailed, TaskInvalid, TaskStopped, TaskLost)):
                ends.append(event)
        try:
            await self.run_plain(ex.process).launch(ex.process, watch)
        except Exception as exc:  # noqa: BLE001 - a broken executor fails its tasks, never the agent
            log.exception("executor %s failed", ex.executor_id)
            ends.append(TaskLaunchFailed(message=str(exc)))
        self._terminated(ex, ends)

    def _terminated(self, ex: CustomExecutor, ends: list[TaskEvent]) -> None:
        ex.state = "TERMINATED"
        ex.ended.set()
        if ex.stream is not None:
            ex.stream.close()
        code = next((e.code for e in reversed(ends) if isinstance(e, TaskExited) and e.code is not None), None)
        message = next((m for e in reversed(ends) if (m := getattr(e, "message", None))), None)
        why = message or (f"Executor exited with status {code}" if code is not None else "Executor terminated")
        for task, emit in list(ex.tasks.values()):
            if task.state not in TERMINAL_TASK_STATES:
                emit(TaskLost(reason="REASON_EXECUTOR_TERMINATED", message=why))
        if self.executors.get((ex.framework_id, ex.executor_id)) is ex:
            del self.executors[(ex.framework_id, ex.executor_id)]
        self._spawn(self.run_plain(ex.process).cleanup(ex.process))
        if self.core is not None:
            self.core.executor_exited(ex.framework_id, ex.executor_id, code if isinstance(code, int) else 1)

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        ex = self.executors.get((task.framework_id, task.executor_id))
        if ex is None or task.task_id not in ex.launched or ex.stream is None:
            if ex is not None:
                ex.tasks.pop(task.task_id, None)
            emit(TaskStopped(message="Task killed before its executor got it"))
            return
        kill: JsonDict = {"task_id": {"value": task.task_id}}
        if task.info.get("kill_policy"):
            kill["kill_policy"] = task.info["kill_policy"]
        ex.stream.send({"type": "KILL", "kill": kill})

    async def cleanup(self, task: AgentTask) -> None:
        ex = self.executors.get((task.framework_id, task.executor_id))
        if ex is not None:
            ex.tasks.pop(task.task_id, None)

    def acknowledged(self, task: AgentTask, uuid_b64: str) -> None:
        ex = self.executors.get((task.framework_id, task.executor_id))
        if ex is not None and ex.stream is not None:
            ex.stream.send({"type": "ACKNOWLEDGED", "acknowledged": {"task_id": {"value": task.task_id},
                                                                     "uuid": uuid_b64}})

    def shutdown_executor(self, framework_id: str, executor_id: str) -> None:
        """SHUTDOWN: ask the executor to end; its process is killed after the shutdown grace period."""
        ex = self.executors.get((framework_id, executor_id))
        if ex is None:
            return
        if ex.stream is not None:
            ex.stream.send({"type": "SHUTDOWN"})
        self._spawn(self._stop_after_grace(ex))

    def shutdown_framework(self, framework_id: str) -> None:
        for fw_id, executor_id in list(self.executors):
            if fw_id == framework_id:
                self.shutdown_executor(fw_id, executor_id)

    def framework_message(self, framework_id: str, executor_id: str, data: str) -> bool:
        """A scheduler's MESSAGE for the executor; False when it is not subscribed here."""
        ex = self.executors.get((framework_id, executor_id))
        if ex is None or ex.stream is None:
            return False
        ex.stream.send({"type": "MESSAGE", "message": {"data": data}})
        return True

    async def _stop_after_grace(self, ex: CustomExecutor) -> None:
        try:
            await asyncio.wait_for(ex.ended.wait(), self.shutdown_grace_s)
        except asyncio.TimeoutError:
            await self.run_plain(ex.process).kill(ex.process, 0.0, lambda event: None)

    async def shutdown(self) -> None:
        for ex in list(self.executors.values()):
            await self.run_plain(ex.process).kill(ex.process, 0.0, lambda event: None)

    # ---- the executor API (executor_api.py calls these) ----------------------------------
    def find(self, framework_id: str, executor_id: str) -> CustomExecutor | None:
        ex = self.executors.get((framework_id, executor_id))
        return ex if ex is not None and ex.state != "TERMINATED" else None

    def subscribed(self, ex: CustomExecutor, stream: Any, known_tasks: set[str]) -> None:
        """The executor subscribed on `stream`: SUBSCRIBED, then LAUNCH of every task it does not know yet."""
        if ex.stream is not None and ex.stream is not stream:
            ex.stream.close()
        ex.stream, ex.state = stream, "SUBSCRIBED"
        ex.launched |= known_tasks
        stream.send({"type": "SUBSCRIBED", "subscribed": {
            "executor_info": ex.info, "framework_info": _framework_info(ex.framework_id, ex.framework),
            "agent_info": self.core.agent_info() if self.core is not None else {"hostname": "", "port": 0},
            "container_id": {"value": ex.run_id}}})
        for task, _ in list(ex.tasks.values()):
            if task.task_id not in ex.launched and task.state not in TERMINAL_TASK_STATES:
                self._send_launch(ex, task)

    def disconnected(self, ex: CustomExecutor, stream: Any) -> None:
        if ex.stream is stream:
            ex.stream = None
            if ex.state == "SUBSCRIBED":
                ex.state = "DISCONNECTED"

    def update(self, ex: CustomExecutor, status: JsonDict) -> bool:
        """An UPDATE from the executor; False when the task is not one of its tasks."""
        entry = ex.tasks.get(value(status.get("task_id")) or "")
        if entry is None:
            return False
        entry[1](TaskReported(status))
        return True

    def executor_message(self, ex: CustomExecutor, data: str) -> None:
        """The executor's MESSAGE for its framework (base64 data), sent on through the master."""
        if self.core is not None:
            self.core.executor_message(ex.framework_id, ex.executor_id, data)

    def _send_launch(self, ex: CustomExecutor, task: AgentTask) -> None:
        """LAUNCH of a task; for a task of a group, one LAUNCH_GROUP of the whole group once every task of it
        has reached this runner (the agent launches a group's tasks one by one)."""
        if not task.group_tasks:
            ex.launched.add(task.task_id)
            ex.stream.send({"type": "LAUNCH", "launch": {"task": task.info}})
            return
        group = [ex.tasks[t][0] for t in task.group_tasks if t in ex.tasks]
        if len(group) < len(task.group_tasks) or any(t.task_id in ex.launched for t in group):
            return
        ex.launched.update(task.group_tasks)
        ex.stream.send({"type": "LAUNCH_GROUP", "launch_group": {"task_group": {"tasks": [t.info for t in group]}}})

    def _spawn(self, coro) -> None:
        t = asyncio.ensure_future(coro)
        self._bg.add(t)
        t.add_done_callback(self._bg.discard)


def _on_host_network(container: JsonDict) -> JsonDict:
    """An executor's container on the host's network (the agent's endpoint must be reachable)."""
    out = dict(docker_equivalent(container))
    if out.get("type") == "DOCKER":
        out["docker"] = {**(out.get("docker") or {}), "network": "HOST"}
        out.pop("network_infos", None)
    return out


def _framework_info(framework_id: str, brief: JsonDict) -> JsonDict:
    return {"user": brief.get("user", ""), "name": brief.get("name", ""), "id": {"value": framework_id},
            **{k: brief[k] for k in ("role", "roles", "capabilities", "principal", "checkpoint", "hostname",
                                     "failover_timeout") if k in brief}}
