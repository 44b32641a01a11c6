"""Standalone containers: the agent operator API's LAUNCH_CONTAINER, WAIT_CONTAINER, KILL_CONTAINER and
REMOVE_CONTAINER for a container id without a parent, as Mesos 1.12's agent answers them.

An operator (authenticated, like every call that changes something here)
runs a command on an agent outside any framework: Mesos uses this for
plugins and maintenance jobs. Each container is a process in its own
sandbox, `<work dir>/containers/<id>`, as the task's user rules say
(task_user.py: CommandInfo.user, else the agent's own user; root refused
unless the agent allows root tasks), with a clean environment and its
stdout/stderr in the sandbox. A ContainerInfo (an image) is refused with
Mesos's "not supported" answer.

What Mesos does, measured on a live 1.12 agent and kept here: LAUNCH
answers 200, or 202 when the id runs already; WAIT blocks until the end and
answers the wait status (`exit 3` is 768, a kill is 9: Mesos's kill of a
standalone container destroys it, whatever the signal asked); the end is
read once (a second WAIT is 404); KILL of an ended or unknown container is
404. REMOVE deletes the sandbox of an ended container (Mesos 1.12's agent
closes the connection without an answer on it; ours answers 200, or 400
while it runs, 404 for an unknown id). Nested containers (with a parent)
are not run here (see agent_operator_api.py).
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.mesos.api.call_validation import CallInvalid
from scylla_singa.mesos.api.fields import value
from scylla_singa.mesos.api.resources import ResourceError, Resources
from .confined_paths import open_sandbox_file
from .process_runner import command_argv, signal_group, spawn_as
from .task_user import TaskUser, TaskUserError, clean_environment, hand_sandbox_to, resolve_user, requested_user, \
    unreachable_parent

@dataclass
class StandaloneContainer:
    """One operator-launched container: its process, sandbox, and its wait status once it ended."""

    id: str
    sandbox: Path
    process: asyncio.subprocess.Process
    resources: Resources
    user: TaskUser
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    wait_status: int | None = None
    killed: bool = False
    waited: bool = False   # its end was read by a WAIT_CONTAINER (Mesos forgets it then)


class Refused(Exception):
    """A call answered with a status other than 200; the message is Mesos's text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class StandaloneContainers:
    """The standalone containers of one agent. `allow_root`: the agent's --allow-root-tasks."""

    def __init__(self, work_dir: Path, allow_root: bool) -> None:
        self.root = work_dir / "containers"
        self.allow_root = allow_root
        self.containers: dict[str, StandaloneContainer] = {}

    async def launch(self, body: dict[str, Any]) -> int:
        """LAUNCH_CONTAINER of a container without parent: 200 launched, 202 known already (running, or ended
        and its end not read yet, as Mesos answers)."""
        cid = value(body.get("container_id")) or ""
        known = self.containers.get(cid)
        if known is not None and not known.waited:
            return 202
        if body.get("container"):
            raise Refused(400, "The provided ContainerInfo is not supported")
        resources = _unreserved(body.get("resources") or [])
        command = body.get("command") or {}
        argv, executable = command_argv(command)
        if not argv:
            raise Refused(400, "'launch_container.command' is invalid: CommandInfo has no value to run")
        try:
            user = resolve_user(*requested_user(command, {}), self.allow_root)
        except TaskUserError as exc:
            raise Refused(400, f"Failed to launch container {cid}: {exc}") from None
        sandbox = self.root / cid
        if sandbox.exists():   # an ended container's artifacts, not removed: a new one starts clean
            shutil.rmtree(sandbox)
        sandbox.mkdir(parents=True, mode=0o750)
        hand_sandbox_to(sandbox, user)
        blocked = unreachable_parent(sandbox, user)
        if blocked is not None:
            shutil.rmtree(sandbox)
            raise Refused(400, f"Failed to launch container {cid}: user {user.name} cannot reach its sandbox "
                               f"{sandbox} ({blocked} is not searchable by it)")
        env = clean_environment(command, {"MESOS_SANDBOX": str(sandbox), "MESOS_DIRECTORY": str(sandbox)})
        with open_sandbox_file(sandbox / "stdout", "ab") as out, open_sandbox_file(sandbox / "stderr", "ab") as err:
            try:
                process = await spawn_as(user, argv, executable, sandbox, env, stdout=out, stderr=err)
            except OSError as exc:
                shutil.rmtree(sandbox)
                raise Refused(400, f"Failed to launch container {cid}: {exc}") from None
        container = StandaloneContainer(cid, sandbox, process, resources, user)
        self.containers[cid] = container
        asyncio.ensure_future(self._reap(container))
        return 200

    async def wait(self, body: dict[str, Any]) -> dict[str, Any]:
        """WAIT_CONTAINER: its wait status once it ended (read once; then 404, as from Mesos)."""
        cid = value(body.get("container_id")) or ""
        container = self.containers.get(cid)
        if container is None or container.waited:
            raise Refused(404, f"Container {cid} cannot be found")
        await container.ended.wait()
        container.waited = True
        return {"exit_status": container.wait_status}

    def kill(self, body: dict[str, Any]) -> None:
        """KILL_CONTAINER: end it (Mesos destroys a standalone container whatever the signal)."""
        cid = value(body.get("container_id")) or ""
        container = self.containers.get(cid)
        if container is None or container.ended.is_set() or container.killed:
            raise Refused(404, f"Container '{cid}' cannot be found (or is already killed)")
        container.killed = True
        signal_group(container.process, signal.SIGKILL)

    def remove(self, body: dict[str, Any]) -> None:
        """REMOVE_CONTAINER: delete an ended container's sandbox and forget it."""
        cid = value(body.get("container_id")) or ""
        container = self.containers.get(cid)
        if container is None:
            raise Refused(404, f"Container {cid} cannot be found")
        if not container.ended.is_set():
            raise Refused(400, f"Container {cid} is running: kill it (KILL_CONTAINER) before removing it")
        shutil.rmtree(container.sandbox, ignore_errors=True)
        del self.containers[cid]

    def running(self) -> list[dict[str, Any]]:
        """GET_CONTAINERS' entries for the running ones, as Mesos lists them (its limits, no executor)."""
        out = []
        for c in self.containers.values():
            if c.ended.is_set():
                continue
            stats: dict[str, Any] = {"timestamp": time.time()}
            if c.resources.scalar("cpus"):
                stats["cpus_soft_limit"] = c.resources.scalar("cpus")
            if c.resources.scalar("mem"):
                stats["mem_limit_bytes"] = stats["mem_soft_limit_bytes"] = int(c.resources.scalar("mem") * 2**20)
            out.append({"container_id": {"value": c.id},
                        "container_status": {"container_id": {"value": c.id}, "executor_pid": c.process.pid},
                        "resource_statistics": stats})
        return out

    async def shutdown(self) -> None:
        """The agent stops: no container outlives it."""
        for container in self.containers.values():
            if not container.ended.is_set():
                signal_group(container.process, signal.SIGKILL)
        for container in list(self.containers.values()):
            await container.ended.wait()

    async def _reap(self, container: StandaloneContainer) -> None:
        code = await container.process.wait()
        signal_group(container.process, signal.SIGKILL)   # what it left running ends with it, as in Mesos
        container.wait_status = (code << 8) if code >= 0 else -code   # wait(2)'s status, as Mesos reports it
        container.ended.set()


def _unreserved(items: Any) -> Resources:
    """The container's resources: valid, and unreserved (Mesos: there is no accounting for them)."""
    try:
        resources = Resources.from_json(items)
    except ResourceError as exc:
        raise Refused(400, CallInvalid("agent", f"Invalid resources: {exc}").message) from None
    if resources.has_reservations():
        raise Refused(400, CallInvalid("agent", "'launch_container.resources' must be unreserved").message)
    return resources
