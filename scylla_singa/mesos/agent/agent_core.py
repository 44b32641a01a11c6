"""One agent's tasks and its reliable status updates, independent of transport.

`AgentCore` receives the master's messages (`on_message`), drives each
task's `TaskLifecycle` with the events its runner emits, and turns `update`
instructions into status updates with a uuid that are resent (`retry`)
until the master forwards the framework's ACK: at least once, in order per
task, as Mesos's status update manager does. With a work dir, tasks and
their unacknowledged updates are written to disk and survive a restart.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.common.files import read_json, write_json_atomic
from scylla_singa.common.transition_table import InstructionDispatch, InvalidTransition, emitted_types
from scylla_singa.mesos.api.fields import VERSION, new_id, value
from scylla_singa.mesos.api.protocol import container_status, make_status, new_uuid_b64
from scylla_singa.mesos.api.resources import Resources
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from . import persistent_volumes
from .fetcher import FetchError, fetch_all
from .task_events import (CancelLaunch, CleanUpTask, SendTaskStatus, StopTask, TaskEvent, TaskExited,
                          TaskKillRequested, TaskLaunchFailed, TaskStopped)
from .task_lifecycle import TASK_TABLE, TaskLifecycle
from .task_runner import AgentTask, TaskRunner

log = logging.getLogger(__name__)
Send = Callable[[dict[str, Any]], None]


@dataclass
class AgentInfo:
    """What an agent tells the master about itself."""

    hostname: str
    resources: Resources
    attributes: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    ip: str = "127.0.0.1"
    pid: str | None = None   # its libprocess-style pid; None: slave(1)@ip:port (a fleet numbers its agents)


class AgentCore:
    """Tasks of one agent. `send` delivers a message to the master (or drops it when offline)."""

    def __init__(self, info: AgentInfo, runner: TaskRunner, *, work_dir: Path | None = None,
                 agent_id: str | None = None, retry_interval: float = 10.0, hdfs_url: str | None = None,
                 default_grace: float = 3.0, fetcher_roots: tuple[Path, ...] = ()) -> None:
        self.info = info
        self.runner = runner
        self.work_dir = work_dir
        self.agent_id = agent_id
        self.ref = new_id("ref-")
        self.retry_interval = retry_interval
        self.hdfs_url = hdfs_url
        self.fetcher_roots = fetcher_roots   # local files (file://, bare paths) are fetched only from under these
        self.default_grace = default_grace
        self.tasks: dict[tuple[str, str], AgentTask] = {}
        # The reservations the master made here (CHECKPOINT_RESOURCES), kept in meta/ and reported when
        # registering, so a newly elected master knows them (Mesos's checkpointed resources).
        self.checkpointed: list[dict[str, Any]] = []
        # The operations with feedback the master follows here (CHECKPOINT_OPERATIONS: Mesos's v1 Operation,
        # statuses included), kept in meta/ and reported when re-registering, so a new master follows them.
        self.operations: list[dict[str, Any]] = []
        self.completed: deque[AgentTask] = deque(maxlen=500)
        self.send: Send | None = None
        self.registered = False
        self.healthy = True           # False while the containerizer (the Docker engine) does not answer
        self.health_message = ""
        self._bg: set[asyncio.Task] = set()
        self._do = InstructionDispatch("the agent's task shell", {
            SendTaskStatus: self._send_status, StopTask: self._stop, CancelLaunch: self._cancel_launch,
            CleanUpTask: self._clean_up}).require(emitted_types(TASK_TABLE))
        # for /state and /metrics/snapshot: frameworks the master shut down here, event counters,
        # the engine's image checks (Mesos's image pulls), how long recovery took
        self.shut_down_frameworks: set[str] = set()
        self.counters: dict[str, float] = {}
        self.image_pull_ms: deque[float] = deque(maxlen=1000)
        self.recovery_s = 0.0

    @property
    def pid(self) -> str:
        return self.info.pid or f"slave(1)@{self.info.ip}:{self.info.port}"

    def count(self, key: str, n: float = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    # ---- registration ---------------------------------------------------
    def registration(self) -> dict[str, Any]:
        """The REGISTER message: who we are and every task we still hold."""
        agent: dict[str, Any] = {"hostname": self.info.hostname, "port": self.info.port, "ip": self.info.ip,
                                 "resources": self.info.resources.to_json(), "attributes": self.info.attributes,
                                 "pid": self.pid, "version": VERSION}
        if not self.healthy:
            agent["healthy"], agent["health"] = False, self.health_message
        if self.agent_id:
            agent["agent_id"] = self.agent_id
            if self.checkpointed:
                agent["checkpointed_resources"] = self.checkpointed
            if self.operations:
                agent["operations"] = self.operations
            agent["tasks"] = [{"framework_id": t.framework_id, "framework": t.framework, "task": t.info,
                               "state": t.state, "status": t.last_status} for t in self.tasks.values()]
        return {"type": "REGISTER", "ref": self.ref, "agent": agent}

    def on_registered(self, agent_id: str) -> None:
        """The master accepted us: remember the id and resend every pending update."""
        self.agent_id = agent_id
        self.registered = True
        if self.work_dir:
            write_json_atomic(self.work_dir / "meta" / "agent.json", {"agent_id": agent_id})
        for task in self.tasks.values():
            if task.pending:
                self._send_head(task)

    def on_refused(self, message: str) -> None:
        """The master removed us earlier: kill everything and register as a new agent."""
        log.warning("agent %s refused by the master: %s", self.agent_id, message)
        for task in list(self.tasks.values()):
            self._spawn(self.runner.kill(task, 0.0, lambda event, t=task: self._clean_up_when_ended(t, event)))
            if self.work_dir:   # nor would a restart recover it, under an id the master removed
                self._task_file(task).unlink(missing_ok=True)
        self.tasks.clear()
        self.agent_id = None
        self.registered = False
        if self.work_dir:
            (self.work_dir / "meta" / "agent.json").unlink(missing_ok=True)
            # A new agent id starts without reservations. Volume directories stay: data goes only by DESTROY.
            write_json_atomic(self.work_dir / "meta" / "resources.json", [])
            write_json_atomic(self.work_dir / "meta" / "operations.json", [])
        self.checkpointed = []
        self.operations = []

    def _checkpoint(self, resources: list[dict[str, Any]]) -> None:
        """Keep the master's reservations and volumes (CHECKPOINT_RESOURCES); make or remove volume
        directories to match."""
        if self.work_dir:
            persistent_volumes.sync(self.work_dir, self.checkpointed, resources)
            write_json_atomic(self.work_dir / "meta" / "resources.json", resources)
        self.checkpointed = resources

    def _keep_operations(self, operations: list[dict[str, Any]]) -> None:
        """Keep the operations the master follows here (CHECKPOINT_OPERATIONS), for the next master."""
        if self.work_dir:
            write_json_atomic(self.work_dir / "meta" / "operations.json", operations)
        self.operations = operations

    def _clean_up_when_ended(self, task: AgentTask, event: TaskEvent) -> None:
        """A task killed after the master removed us (it counts it lost, its framework was told): no status
        update and no lifecycle step, but once it has ended, what it leaves (its container) is removed."""
        if isinstance(event, (TaskStopped, TaskExited, TaskLaunchFailed)):
            self._spawn(self.runner.cleanup(task))

    def disconnected(self) -> None:
        self.registered = False

    def set_health(self, healthy: bool, message: str = "") -> None:
        """The containerizer stopped (or resumed) working: tell the master, which stops (or resumes)
        offering this agent's resources. Idempotent."""
        if healthy == self.healthy:
            return
        self.healthy, self.health_message = healthy, ("" if healthy else message)
        log.warning("agent %s is %s%s", self.agent_id, "healthy again" if healthy else "unhealthy",
                    f": {message}" if message and not healthy else "")
        if self.registered and self.send is not None:
            self.send({"type": "AGENT_HEALTH", "agent_id": self.agent_id, "healthy": healthy,
                       "message": self.health_message})

    # ---- messages from the master ---------------------------------------
    def on_message(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "RUN_TASK":
            self._run_task(msg)
        elif kind == "RUN_TASK_GROUP":
            self._run_task_group(msg)
        elif kind == "KILL_TASK":
            task = self.tasks.get((msg.get("framework_id"), msg.get("task_id")))
            if task is not None:
                grace = msg.get("grace_s")
                self._event(task, TaskKillRequested(self.default_grace if grace is None else grace))
        elif kind == "ACK":
            self._ack(msg)
        elif kind == "CHECKPOINT_RESOURCES":
            self._checkpoint(list(msg.get("resources") or []))
        elif kind == "CHECKPOINT_OPERATIONS":
            self._keep_operations([o for o in msg.get("operations") or [] if isinstance(o, dict)])
        elif kind == "SHUTDOWN_EXECUTOR":
            self.runner.shutdown_executor(str(msg.get("framework_id")), str(msg.get("executor_id")))
        elif kind == "FRAMEWORK_MESSAGE":
            delivered = self.runner.framework_message(str(msg.get("framework_id")), str(msg.get("executor_id")),
                                                      str(msg.get("data") or ""))
            self.count("framework_messages" if delivered else "invalid_framework_messages")
        elif kind == "SHUTDOWN_FRAMEWORK":
            self.runner.shutdown_framework(str(msg.get("framework_id")))
            self.shut_down_frameworks.add(str(msg.get("framework_id")))
            for task in [t for t in self.tasks.values() if t.framework_id == msg.get("framework_id")]:
                self._event(task, TaskKillRequested(self.default_grace))

    def _run_task(self, msg: dict[str, Any]) -> None:
        info = msg.get("task") or {}
        key = (msg.get("framework_id"), value(info.get("task_id")))
        if not all(key) or key in self.tasks:
            return
        task = AgentTask(key[0], msg.get("framework") or {}, info, TaskLifecycle(key[1]), new_id())
        task.agent_id = self.agent_id or ""
        if task.on_custom_executor:   # the tasks of a custom executor share its run (container id and sandbox)
            task.executor_run = self._executor_run(key[0], task.executor_id)
        self.tasks[key] = task
        self._save(task)
        task.launch = self._spawn(self._launch(task))

    def _executor_run(self, framework_id: str, executor_id: str) -> str:
        """The run (container id) of the framework's custom executor here: the running one's, the one a task
        still waiting to start will start, or a new one."""
        running = self.runner.running_executor(framework_id, executor_id)
        if running is not None:
            return running
        for task in self.tasks.values():
            if (task.framework_id == framework_id and task.on_custom_executor and task.executor_id == executor_id
                    and task.state not in TERMINAL_TASK_STATES and task.executor_run):
                return task.executor_run
        return new_id()

    def _run_task_group(self, msg: dict[str, Any]) -> None:
        """LAUNCH_GROUP: every task of the group under one executor. The default executor: one run id, one
        sandbox with a directory per task, started and ended together by the task-group runner. A custom
        executor: its run and sandbox, and one LAUNCH_GROUP event to it (executor_runner.py)."""
        framework_id, executor = msg.get("framework_id"), msg.get("executor") or {}
        infos = [t for t in msg.get("tasks") or [] if isinstance(t, dict) and value(t.get("task_id"))]
        keys = [(framework_id, value(t.get("task_id"))) for t in infos]
        if not framework_id or not infos or any(k in self.tasks for k in keys):
            return
        executor = {**executor, "type": executor.get("type", "DEFAULT"),
                    "framework_id": {"value": framework_id}}
        ids = tuple(k[1] for k in keys)
        # a default executor runs one group (a new run); a custom executor may run several, in its one run
        run = (self._executor_run(framework_id, value(executor.get("executor_id")) or "")
               if executor["type"] == "CUSTOM" else new_id())
        for key, info in zip(keys, infos):
            task = AgentTask(framework_id, msg.get("framework") or {}, info, TaskLifecycle(key[1]), new_id())
            task.agent_id = self.agent_id or ""
            task.group, task.executor_run, task.group_tasks = executor, run, ids
            self.tasks[key] = task
            self._save(task)
        for key in keys:
            task = self.tasks[key]
            task.launch = self._spawn(self._launch(task))

    def agent_info(self) -> dict[str, Any]:
        """This agent as a v1 AgentInfo (what executors get in SUBSCRIBED)."""
        out: dict[str, Any] = {"hostname": self.info.hostname, "port": self.info.port,
                               "resources": self.info.resources.to_json(), "attributes": self.info.attributes}
        if self.agent_id:
            out["id"] = {"value": self.agent_id}
        return out

    def executor_message(self, framework_id: str, executor_id: str, data: str) -> None:
        """A custom executor's MESSAGE for its framework: to the master, which sends it on (MESSAGE event)."""
        self.count("executor_messages")
        if self.send is not None and self.registered:
            self.send({"type": "EXECUTOR_MESSAGE", "agent_id": self.agent_id, "framework_id": framework_id,
                       "executor_id": executor_id, "data": data})

    def executor_exited(self, framework_id: str, executor_id: str, status: int) -> None:
        """An executor ended here (a task group's, when its last task ended): tell the master, as Mesos's
        agent does, so it forgets the executor and tells the framework (FAILURE event)."""
        self.count("executors_terminated")
        if self.send is not None and self.registered:
            self.send({"type": "EXECUTOR_EXITED", "agent_id": self.agent_id, "framework_id": framework_id,
                       "executor_id": executor_id, "status": status})

    async def _launch(self, task: AgentTask) -> None:
        emit = self._emitter(task)
        try:
            if self.runner.needs_sandbox and self.work_dir is not None:
                task.sandbox = self._make_sandbox(task)
                self._save(task)
                task.volume_mounts = persistent_volumes.mounts_for(task.info, self.work_dir, self.checkpointed)
                uris = (task.info.get("command") or {}).get("uris") or []
                if uris:
                    await fetch_all(uris, task.sandbox, self.hdfs_url, self.fetcher_roots)
                    self.count("fetches_succeeded")
            await self.runner.launch(task, emit)
        except persistent_volumes.VolumeUnusable as exc:
            emit(TaskLaunchFailed(message=f"Failed to launch: {exc}"))
        except FetchError as exc:
            self.count("fetches_failed")
            emit(TaskLaunchFailed(reason="REASON_CONTAINER_LAUNCH_FAILED", message=f"Failed to fetch URIs: {exc}"))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any runner failure fails the task, not the agent
            log.exception("launch of task %s failed", task.task_id)
            emit(TaskLaunchFailed(message=f"Failed to launch: {exc}"))

    def _make_sandbox(self, task: AgentTask) -> Path:
        """Mesos's layout: a command task's executor has the task's id; a custom executor's tasks share its
        sandbox; a task of a group has a directory `tasks/<task id>` in its group executor's sandbox."""
        executors = (self.work_dir / "slaves" / (self.agent_id or "unregistered") / "frameworks"
                     / _safe(task.framework_id) / "executors")
        if task.on_custom_executor:   # a custom executor's tasks share its sandbox
            path = executors / _safe(task.executor_id) / "runs" / task.executor_run
        elif task.group is not None:
            run = executors / _safe(task.executor_id) / "runs" / task.executor_run
            run.mkdir(parents=True, exist_ok=True)
            os.chmod(run, 0o750)   # as every sandbox directory (below)
            path = run / "tasks" / _safe(task.task_id)
        else:
            path = executors / _safe(task.task_id) / "runs" / task.container_id
        path.mkdir(parents=True, exist_ok=True)
        # As Apache Mesos makes them: the agent's (root's), 0750, files 0644. A container running as
        # another user cannot read or write here; what a task needs comes in as volumes (docs/contracts.md).
        os.chmod(path, 0o750)
        for name in ("stdout", "stderr"):
            (path / name).touch()
            os.chmod(path / name, 0o644)
        return path

    # ---- lifecycle ----------------------------------------------------
    def _emitter(self, task: AgentTask) -> Callable[[TaskEvent], None]:
        return lambda event: self._event(task, event)

    def _event(self, task: AgentTask, event: TaskEvent) -> None:
        try:
            instructions = task.lifecycle.handle(event)
        except InvalidTransition as exc:
            # A runner's event the task's state has no row for: reported with the task's story, and the
            # task is left as it is (raising here would end the runner's coroutine or the master link).
            log.error("%s", exc)
            return
        for ins in instructions:
            self._do(ins, task)
        self._save(task)

    def _send_status(self, ins: SendTaskStatus, task: AgentTask) -> None:
        if ins.state == "TASK_KILLING" and not _capable(task.framework, "TASK_KILLING_STATE"):
            return
        if ins.reported is not None:
            status = self._reported(task, ins.reported)
        else:
            status = make_status(task.task_id, ins.state, agent_id=self.agent_id, reason=ins.reason,
                                 message=ins.message, uuid_b64=new_uuid_b64(),
                                 container_status=ins.container_status or _known_container_status(task,
                                                                                                   self.info.ip),
                                 executor_id=task.executor_id)
        self._count_update(task, status)
        task.last_status = status
        task.statuses.append(status)
        del task.statuses[:-8]
        task.pending.append(status)
        if len(task.pending) == 1:
            self._send_head(task)

    def _stop(self, ins: StopTask, task: AgentTask) -> None:
        task.kill_requested = True
        self._spawn(self.runner.kill(task, float(ins.grace_s), self._emitter(task)))

    def _cancel_launch(self, ins: CancelLaunch, task: AgentTask) -> None:
        if task.launch is not None:
            task.launch.cancel()

    def _clean_up(self, ins: CleanUpTask, task: AgentTask) -> None:
        task.finished_at = time.time()
        self._spawn(self.runner.cleanup(task))

    def _send_head(self, task: AgentTask) -> None:
        if not task.pending or not self.registered or self.send is None:
            return
        head = task.pending[0]
        head["agent_id"] = {"value": self.agent_id}
        task.last_sent = time.monotonic()
        task.send_count += 1
        self.send({"type": "STATUS", "agent_id": self.agent_id, "framework_id": task.framework_id,
                   "status": head})

    def _reported(self, task: AgentTask, reported: dict[str, Any]) -> dict[str, Any]:
        """A custom executor's TaskStatus as the agent sends it on: its own fields and uuid (the executor is
        told when the framework acknowledges it), with this agent's id, and the time if it gave none."""
        status = {k: v for k, v in reported.items() if k != "agent_id"}
        status["agent_id"] = {"value": self.agent_id}
        status.setdefault("executor_id", {"value": task.executor_id})
        status.setdefault("source", "SOURCE_EXECUTOR")
        status.setdefault("timestamp", time.time())
        task.executor_uuids.add(status["uuid"])
        return status

    def _count_update(self, task: AgentTask, status: dict[str, Any]) -> None:
        self.count("status_updates")
        state = status["state"]
        if state in TERMINAL_TASK_STATES:
            self.count(f"tasks_{state[5:].lower()}")
            if task.executor_info is None:
                self.count("executors_terminated")   # a command task's executor ends with it
        if status.get("reason") == "REASON_CONTAINER_LAUNCH_FAILED":
            self.count("launch_errors")

    def _ack(self, msg: dict[str, Any]) -> None:
        task = self.tasks.get((msg.get("framework_id"), msg.get("task_id")))
        if task is None or not task.pending or task.pending[0].get("uuid") != msg.get("uuid"):
            return  # a duplicate or stale ACK
        acked = task.pending.pop(0)
        if acked["uuid"] in task.executor_uuids:   # the executor learns its update was acknowledged
            task.executor_uuids.discard(acked["uuid"])
            self.runner.acknowledged(task, acked["uuid"])
        if task.pending:
            self._send_head(task)
        elif task.state in TERMINAL_TASK_STATES:
            self._complete(task)
            return
        self._save(task)

    def _complete(self, task: AgentTask) -> None:
        self.tasks.pop(task.key, None)
        self.completed.append(task)
        if self.work_dir and self.agent_id:
            self._task_file(task).unlink(missing_ok=True)

    def retry(self, now: float | None = None) -> None:
        """Resend the oldest unacknowledged update of every task whose last send is older than the interval."""
        now = time.monotonic() if now is None else now
        for task in self.tasks.values():
            if task.pending and now - task.last_sent >= self.retry_interval:
                self._send_head(task)

    # ---- persistence and recovery ---------------------------------------
    def _task_file(self, task: AgentTask) -> Path:
        digest = hashlib.sha1(f"{task.framework_id}/{task.task_id}".encode()).hexdigest()
        return self.work_dir / "meta" / "tasks" / f"{digest}.json"

    def _save(self, task: AgentTask) -> None:
        if self.work_dir is not None and task.key in self.tasks:
            write_json_atomic(self._task_file(task), task.to_json())

    async def recover(self) -> None:
        """Load the agent id and tasks from the work dir and let the runner follow them again."""
        if self.work_dir is None:
            return
        started = time.monotonic()
        try:
            await self._recover()
        finally:
            self.recovery_s = time.monotonic() - started

    async def _recover(self) -> None:
        meta = read_json(self.work_dir / "meta" / "agent.json", {}) or {}
        self.agent_id = meta.get("agent_id")
        self.checkpointed = list(read_json(self.work_dir / "meta" / "resources.json", []) or [])
        self.operations = list(read_json(self.work_dir / "meta" / "operations.json", []) or [])
        for path in sorted((self.work_dir / "meta" / "tasks").glob("*.json")):
            data = read_json(path)
            if not data:
                continue
            task = AgentTask.from_json(data)
            task.agent_id = self.agent_id or ""
            self.tasks[task.key] = task
            if task.state not in TERMINAL_TASK_STATES:
                await self.runner.recover(task, self._emitter(task))

    async def shutdown(self, kill: bool = True) -> None:
        """Stop background work; with `kill`, stop every task's container/process first."""
        if kill:
            await self.runner.shutdown()
        for t in list(self._bg):
            t.cancel()
        await asyncio.gather(*self._bg, return_exceptions=True)

    def gc(self, delay_s: float, now: float | None = None) -> int:
        """Remove sandboxes of tasks that ended more than `delay_s` ago; how many were removed."""
        now = time.time() if now is None else now
        removed = 0
        for task in list(self.completed):
            if task.sandbox and task.finished_at and now - task.finished_at > delay_s and task.sandbox.exists():
                shutil.rmtree(task.sandbox, ignore_errors=True)
                removed += 1
        self.count("gc_removals", removed)
        return removed

    def _spawn(self, coro) -> asyncio.Task:
        t = asyncio.ensure_future(coro)
        self._bg.add(t)
        t.add_done_callback(self._bg.discard)
        return t


def _capable(framework: dict[str, Any], name: str) -> bool:
    return any(c.get("type") == name for c in framework.get("capabilities") or [])


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:200] or "_"


def _known_container_status(task: AgentTask, agent_ip: str) -> dict[str, Any] | None:
    """What an update says of the task's container when its event says nothing new: the last one known, else
    the container's id on the agent's address (where Mesos's executor container runs before the task's
    own is up). Mesos's agent puts the container's status on every update of a task it runs, and clients
    read it from the first (avmesos-cli's `task exec` finds the container in statuses[0])."""
    for earlier in reversed(task.statuses):
        if earlier.get("container_status"):
            return earlier["container_status"]
    return container_status(task.container_id, agent_ip, None) if task.container_id else None
