"""Docker tasks through the agent's Docker engine (the Mesos Docker containerizer's job).

The Docker SDK is blocking, so every engine call runs in this runner's own
thread pool (long waits and log streams must not starve asyncio's default
executor). Output is copied to the sandbox's `stdout`/`stderr` as it
appears. Containers carry the `scylla.*` labels; `cleanup` removes a task's
container and `shutdown` removes every container this agent started.

When the engine stops answering, the tasks it ran are lost (TASK_FAILED,
REASON_EXECUTOR_TERMINATED, as when a Mesos Docker executor dies) and
`health_listener(False, why)` is told, so the agent stops offering its
resources; removals that failed meanwhile are done once the engine is back
(`engine_back`), as a Mesos agent kills orphan containers on recovery.
"""

from __future__ import annotations

import asyncio
import io
import logging
import tarfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests
from docker.models.containers import Container

from scylla_singa.contracts import AGENT_LABEL, MANAGED_LABEL, container_name
from scylla_singa.mesos.api.container_info import SANDBOX_MOUNT, SpecError
from scylla_singa.mesos.api.protocol import container_status
from .docker_spec import DockerSpec, build_spec
from .confined_paths import lexically_within, open_sandbox_file
from .image_user import ContainerUserRefused, container_uid
from .persistent_volumes import hand_to, reachable_in
from .job_volumes import VolumeRefused, pin_host_volume
from .task_events import (TaskContainerUp, TaskExited, TaskInvalid, TaskLaunchFailed, TaskLost, TaskStarting,
                          TaskStopped)
from .task_runner import AgentTask, Emit, TaskRunner

log = logging.getLogger(__name__)
# What the Docker SDK raises when the engine itself is gone (its socket closed or refused).
ENGINE_ERRORS = (requests.exceptions.RequestException, docker.errors.DockerException, OSError)
HealthListener = Callable[[bool, str], None]


class DockerRunner(TaskRunner):
    """Runs ContainerInfo DOCKER tasks on one engine."""

    def __init__(self, client: docker.DockerClient, allowed_roots: list[Path], allow_root_tasks: bool = False) -> None:
        self.client = client
        self.allowed_roots = allowed_roots
        self.allow_root_tasks = allow_root_tasks
        self.pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="docker-runner")
        self._containers: dict[str, Container] = {}
        self._log_threads: dict[str, asyncio.Future] = {}
        self._unremoved: set[str] = set()   # container names whose removal failed (engine down)
        self._passwd: dict[str, str] = {}    # image id -> its /etc/passwd (names in USER resolved against it)
        self.health_listener: HealthListener | None = None
        # told how long each launch's image check took (the agent's containerizer/docker/image_pull_ms)
        self.image_timer: Callable[[float], None] | None = None

    async def _call(self, fn, *args, **kwargs) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, lambda: fn(*args, **kwargs))

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        try:
            spec = build_spec(task.info, framework_id=task.framework_id, agent_id=task.agent_id,
                              container_id=task.container_id, sandbox=task.sandbox,
                              allowed_roots=self.allowed_roots, persistent=task.volume_mounts)
        except SpecError as exc:
            emit(TaskInvalid(message=str(exc)))
            return
        started = time.perf_counter()
        try:
            problem = await self._call(self._check_engine, spec)
            if self.image_timer is not None:
                self.image_timer((time.perf_counter() - started) * 1000.0)
        except ENGINE_ERRORS as exc:
            problem = f"Failed to launch container: the Docker engine does not answer: {exc.__class__.__name__}"
            self._engine_down(problem)
        if problem:
            emit(TaskLaunchFailed(message=problem))
            return
        emit(TaskStarting())
        try:
            container = await self._call(self._create_and_start, spec, task.framework_id)
        except VolumeRefused as exc:
            emit(TaskLaunchFailed(message=f"Failed to launch container: {exc}"))
            return
        except docker.errors.APIError as exc:
            emit(TaskLaunchFailed(message=f"Failed to launch container: {_explain(exc)}"))
            await self._call(self._remove, spec.name)
            return
        task.handle = container
        self._containers[task.container_id] = container
        await self._follow(task, container, spec.network, emit, logs=True)

    async def _follow(self, task: AgentTask, container: Container, network: str, emit: Emit,
                      logs: bool) -> None:
        """Report RUNNING with the container's IP, copy its output, wait for its end."""
        if logs:
            loop = asyncio.get_running_loop()
            self._log_threads[task.container_id] = asyncio.gather(*(
                loop.run_in_executor(self.pool, _copy_logs, self.client, container.id, task.sandbox, which)
                for which in ("stdout", "stderr")))
        try:
            attrs = await self._call(lambda: self.client.api.inspect_container(container.id))
            task.pid = attrs["State"].get("Pid") or None
            if attrs["State"].get("Running") or attrs["State"].get("Status") == "exited":
                emit(TaskContainerUp(container_status(
                    task.container_id, _ip(attrs, network), network if network not in ("host", "none") else None)))
            result = await self._call(container.wait)
            attrs = await self._call(lambda: self.client.api.inspect_container(container.id))
        except ENGINE_ERRORS as exc:
            await self._container_lost(task, container, exc, emit)
            return
        code = int(result.get("StatusCode", attrs["State"].get("ExitCode", 1)))
        oom = bool(attrs["State"].get("OOMKilled"))
        pending = self._log_threads.get(task.container_id)
        if pending is not None:
            await asyncio.wait([pending], timeout=5)
        message = (f"Memory limit exceeded: the container was OOM-killed (limit "
                   f"{attrs['HostConfig'].get('Memory', 0) // (1024 * 1024)} MB)" if oom
                   else f"Command exited with status {code}")
        emit(TaskExited(code, oom, message))

    async def _container_lost(self, task: AgentTask, container: Container, exc: Exception, emit: Emit) -> None:
        """Following the container failed: the engine died (or the container was removed under us)."""
        if await self.engine_answers():
            why = f"The task's container {container.id[:12]} is gone ({exc.__class__.__name__}: {exc})"
        else:
            why = f"The Docker engine stopped answering ({exc.__class__.__name__}); the container is lost"
            self._engine_down(why)
        emit(TaskLost(reason="REASON_EXECUTOR_TERMINATED", message=why))

    async def engine_answers(self) -> bool:
        try:
            return bool(await self._call(self.client.ping))
        except ENGINE_ERRORS:
            return False

    def _engine_down(self, why: str) -> None:
        if self.health_listener is not None:
            self.health_listener(False, why)

    async def engine_back(self) -> None:
        """The engine answers again: remove the containers whose removal failed while it was down."""
        for name in list(self._unremoved):
            self._unremoved.discard(name)
            await self._call(self._remove, name)

    def _check_engine(self, spec: DockerSpec) -> str | None:
        """Why the engine cannot run `spec` (missing image, unusable network), or None."""
        try:
            if spec.force_pull:
                image = self.client.images.pull(spec.image)
            else:
                image = self.client.images.get(spec.image)
        except docker.errors.ImageNotFound:
            try:
                image = self.client.images.pull(spec.image)
            except docker.errors.APIError as exc:
                return f"Failed to launch container: image {spec.image} is not on the agent and cannot be pulled: {_explain(exc)}"
        except docker.errors.APIError as exc:
            return f"Failed to launch container: cannot pull image {spec.image}: {_explain(exc)}"
        try:
            uid = container_uid(spec.image, spec.user, (image.attrs.get("Config") or {}).get("User") or "",
                                lambda: self._image_passwd(image.id), self.allow_root_tasks)
        except ContainerUserRefused as exc:
            return f"Failed to launch container: {exc}"
        hand_to(spec.persistent, uid, -1)   # a new persistent volume becomes the container user's
        for host_path, mount in spec.volumes.items():
            if mount.get("bind") == SANDBOX_MOUNT:
                reachable_in(Path(host_path), spec.persistent)
        if spec.user_network:
            try:
                net = self.client.networks.get(spec.network)
            except docker.errors.NotFound:
                if self._swarm_worker():
                    # A worker lists only the overlays it has containers on; the engine
                    # fetches an attachable one from the managers when a container joins it.
                    return None
                return f"Failed to launch container: network {spec.network} does not exist on the agent"
            if net.attrs.get("Scope") == "swarm" and not net.attrs.get("Attachable"):
                return f"Failed to launch container: overlay network {spec.network} is not attachable"
        return None

    def _image_passwd(self, image_id: str) -> str:
        """The image's /etc/passwd (cached by image id): copied out of a container created, never started,
        from it, then removed. Empty when the image has none."""
        if image_id not in self._passwd:
            created = self.client.api.create_container(image_id, command=["/nonexistent"], entrypoint=[],
                                                       network_disabled=True)
            try:
                stream, _ = self.client.api.get_archive(created["Id"], "/etc/passwd")
                with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
                    member = tar.extractfile(tar.getmembers()[0])
                    self._passwd[image_id] = member.read().decode("utf-8", "replace") if member else ""
            except docker.errors.NotFound:
                self._passwd[image_id] = ""
            finally:
                self.client.api.remove_container(created["Id"], force=True)
        return self._passwd[image_id]

    def _swarm_worker(self) -> bool:
        """Whether the engine is an active swarm member without manager rights."""
        swarm = self.client.info().get("Swarm") or {}
        return swarm.get("LocalNodeState") == "active" and not swarm.get("ControlAvailable")

    def _create_and_start(self, spec: DockerSpec, framework_id: str) -> Container:
        """Check the job volumes again at mount time (job_volumes.py), then create and start at once."""
        # the sandbox and persistent volumes are the agent's own directories, not job volumes
        sandboxes = [h for h, v in spec.volumes.items() if v.get("bind") == SANDBOX_MOUNT]
        sandboxes += [str(mount.directory) for mount in spec.persistent]
        for host_path in list(spec.volumes):
            # by the path as checked (resolving it again would follow what may have been swapped in since)
            if not lexically_within(host_path, sandboxes):
                pin_host_volume(host_path, self.allowed_roots, framework_id)
        kwargs = spec.create_kwargs()
        if spec.user_network:
            kwargs["networking_config"] = {spec.network: self.client.api.create_endpoint_config(
                aliases=spec.aliases or None)}
        container = start_created(self.client, kwargs)
        if spec.window is not None:   # before RUNNING: a command that waits for input sees its size
            try:
                self.client.api.resize(container.id, height=spec.window.rows, width=spec.window.columns)
            except docker.errors.APIError:
                pass   # it ended already: its end is reported as any container's
        return container

    def _remove(self, name_or_id: str) -> None:
        try:
            self.client.api.remove_container(name_or_id, force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                log.warning("cannot remove container %s: %s", name_or_id, exc)
        except ENGINE_ERRORS as exc:
            log.warning("cannot remove container %s now (%s); again when the engine answers",
                        name_or_id, exc.__class__.__name__)
            self._unremoved.add(name_or_id)

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        container = task.handle
        if container is None:
            if task.launch is not None:
                task.launch.cancel()
            await self._call(self._remove, container_name(task.container_id))
            emit(TaskStopped())
            return
        try:
            await self._call(container.stop, timeout=max(0, int(round(grace_s))))
        except docker.errors.NotFound:
            emit(TaskStopped())
        except docker.errors.APIError as exc:
            log.warning("docker stop of %s failed: %s", container.id[:12], exc)
        except ENGINE_ERRORS as exc:  # the engine is gone: following the container reports it lost
            log.warning("docker stop of %s failed: %s", container.id[:12], exc.__class__.__name__)

    async def cleanup(self, task: AgentTask) -> None:
        self._containers.pop(task.container_id, None)
        self._log_threads.pop(task.container_id, None)
        await self._call(self._remove, container_name(task.container_id))

    async def recover(self, task: AgentTask, emit: Emit) -> None:
        name = container_name(task.container_id)
        try:
            container = await self._call(self.client.containers.get, name)
        except docker.errors.NotFound:
            emit(TaskLost(reason="REASON_EXECUTOR_TERMINATED",
                             message="The task's container is gone after an agent restart"))
            return
        task.handle = container
        self._containers[task.container_id] = container
        network = container.attrs["HostConfig"].get("NetworkMode", "bridge")
        task.launch = asyncio.ensure_future(self._follow(task, container, network, emit, logs=False))

    async def shutdown(self) -> None:
        """Remove every container of this runner (and wait), then stop the thread pool."""
        names = [container_name(cid) for cid in list(self._containers)]
        await asyncio.gather(*(self._call(self._remove, n) for n in names), return_exceptions=True)
        self._containers.clear()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


# What the engine of a swarm worker answers `start` when the managers did not give it the container's
# attachment to an attachable overlay in time. Seen on fresh clusters under load (twice in twenty jobs
# right after `cluster up`); the managers answer a moment later, so the container is made again.
_ATTACH_FAILED = "attaching to network failed"
_TIMED_OUT = "context deadline exceeded"
ATTACH_ATTEMPTS = 3
ATTACH_PAUSE_S = 2.0   # before the second attempt; twice that before the third


def start_created(client: docker.DockerClient, kwargs: dict[str, Any]) -> Container:
    """Create a container from `kwargs` and start it; when its overlay attachment timed out, remove it and
    do both again (ATTACH_ATTEMPTS in all). Any other APIError, or the last attempt's, is raised.

    Runs in the runner's thread pool, so its pauses do not hold the agent's loop.
    """
    for attempt in range(1, ATTACH_ATTEMPTS + 1):
        container = client.containers.create(**kwargs)
        try:
            container.start()
            return container
        except docker.errors.APIError as exc:
            why = _explain(exc)
            if attempt == ATTACH_ATTEMPTS or _ATTACH_FAILED not in why or _TIMED_OUT not in why:
                raise
            log.warning("container %s: %s; made again (attempt %d of %d)", kwargs.get("name"), why, attempt + 1,
                        ATTACH_ATTEMPTS)
            try:
                client.api.remove_container(container.id, force=True)
            except docker.errors.APIError:
                pass   # then creating it again under its name fails, and that is the launch's answer
            time.sleep(ATTACH_PAUSE_S * attempt)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _copy_logs(client: docker.DockerClient, container_id: str, sandbox: Path, which: str) -> None:
    """Append the container's stdout or stderr to the sandbox file of that name until it ends."""
    try:
        stream = client.api.logs(container_id, stdout=which == "stdout", stderr=which == "stderr",
                                 stream=True, follow=True)
        with open_sandbox_file(sandbox / which, "ab") as out:
            for chunk in stream:
                out.write(chunk)
    except (docker.errors.APIError, OSError, ValueError) as exc:
        log.debug("log copy of %s ended: %s", container_id[:12], exc)


def _ip(attrs: dict[str, Any], network: str) -> str | None:
    nets = (attrs.get("NetworkSettings") or {}).get("Networks") or {}
    chosen = nets.get(network) or next(iter(nets.values()), None) or {}
    return chosen.get("IPAddress") or None


def _explain(exc: docker.errors.APIError) -> str:
    return str(getattr(exc, "explanation", None) or exc)


def managed_containers(client: docker.DockerClient, agent_id: str | None = None) -> list[Container]:
    """Containers an agent started (all agents, or one)."""
    label = f"{AGENT_LABEL}={agent_id}" if agent_id else f"{MANAGED_LABEL}=true"
    return client.containers.list(ignore_removed=True, all=True, filters={"label": label})
