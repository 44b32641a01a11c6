"""TaskInfo -> Docker container settings, as Mesos's Docker containerizer maps them. Pure.

`build_spec` is what the agent runs, given its own configuration (sandbox,
allowed volume roots); it applies the ContainerInfo rules the master checked
already (mesos/api/container_info.py) and raises their SpecError.

Mapping (Mesos docker.cpp): network HOST/BRIDGE/NONE, USER with exactly one
`network_infos[].name`; `cpu-shares` = 1024 x cpus; memory = max(mem, 32 MB);
environment from CommandInfo plus MESOS_SANDBOX (and MESOS_TASK_ID,
MESOS_FRAMEWORK_ID, MESOS_AGENT_ID); shell=true runs `/bin/sh -c value`,
shell=false appends value and arguments to the image's entrypoint; the
sandbox is mounted at /mnt/mesos/sandbox; the working directory is the
image's own (Mesos sets none; a `workdir` parameter sets one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.contracts import (AGENT_LABEL, ENV_TASK_ID, FRAMEWORK_LABEL, MANAGED_LABEL, TASK_LABEL,
                                    container_name)
from scylla_singa.mesos.api.container_info import (SANDBOX_MOUNT, SpecError, check_parameter, check_ports,
                                                   docker_equivalent, parse_ulimit, user_network_name,
                                                   validate_container)
from scylla_singa.mesos.api.resources import Resources
from .terminal import WindowSize, task_terminal

MIN_MEM_MB = 32.0
DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")


@dataclass
class DockerSpec:
    """Everything needed for `docker create`, in Docker SDK terms."""

    name: str
    image: str
    entrypoint: list[str] | None
    command: list[str] | None
    environment: dict[str, str]
    labels: dict[str, str]
    network: str            # "host", "bridge", "none" or a user network's name
    user_network: bool
    aliases: list[str] = field(default_factory=list)
    hostname: str | None = None
    ports: dict[str, int] = field(default_factory=dict)
    volumes: dict[str, dict[str, str]] = field(default_factory=dict)
    cpu_shares: int = 1024
    mem_limit: int = 0
    working_dir: str | None = None   # the image's WORKDIR, as under Mesos's Docker containerizer
    user: str | None = None
    shm_size: str | None = None
    ulimits: list[tuple[str, int, int]] = field(default_factory=list)
    force_pull: bool = False
    persistent: list[Any] = field(default_factory=list)   # its persistent volumes' VolumeMounts (agent-made)
    tty: bool = False   # a MESOS container with tty_info: created with a terminal and an open stdin
    window: WindowSize | None = None   # that terminal's size, set once the container started

    def create_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for `client.containers.create` (networking_config added by the runner)."""
        kw: dict[str, Any] = dict(
            image=self.image, name=self.name, command=self.command, entrypoint=self.entrypoint,
            environment=self.environment, labels=self.labels, hostname=self.hostname,
            volumes=self.volumes, cpu_shares=self.cpu_shares, mem_limit=self.mem_limit,
            memswap_limit=self.mem_limit, working_dir=self.working_dir, detach=True,
            privileged=False, stdin_open=self.tty, tty=self.tty)
        if self.user:
            kw["user"] = self.user
        if self.shm_size:
            kw["shm_size"] = self.shm_size
        if self.ulimits:
            from docker.types import Ulimit
            kw["ulimits"] = [Ulimit(name=n, soft=s, hard=h) for n, s, h in self.ulimits]
        if self.ports:
            kw["ports"] = self.ports
        if self.user_network:
            kw["network"] = self.network
        else:
            kw["network_mode"] = self.network
        return {k: v for k, v in kw.items() if v is not None}


def build_spec(task: dict[str, Any], *, framework_id: str, agent_id: str, container_id: str,
               sandbox: Path, allowed_roots: list[Path], persistent: list[Any] | None = None) -> DockerSpec:
    """The container for `task` on this agent; raises SpecError (volumes outside the allowed roots, ...).
    `persistent`: the VolumeMounts of its persistent volumes (persistent_volumes.py), mounted as the Mesos
    containerizer mounts them (a relative container path under the sandbox)."""
    container = docker_equivalent(task.get("container") or {})
    resources = Resources.from_json(task.get("resources"))
    validate_container(container, resources)
    docker = container["docker"]
    network = docker.get("network", "HOST")
    params = [check_parameter(p) for p in docker.get("parameters") or []]
    user_net = user_network_name(container, network)
    spec = DockerSpec(
        name=container_name(container_id), image=docker["image"],
        entrypoint=None, command=None, environment=_environment(task, framework_id, agent_id),
        labels={MANAGED_LABEL: "true", AGENT_LABEL: agent_id, TASK_LABEL: task["task_id"]["value"],
                FRAMEWORK_LABEL: framework_id},
        network=user_net or network.lower(), user_network=user_net is not None,
        hostname=container.get("hostname") or None, ports=check_ports(docker, network, resources),
        volumes=_volumes(container, sandbox, allowed_roots, persistent or []), persistent=list(persistent or []),
        cpu_shares=max(2, int(round(1024 * resources.scalar("cpus") or 1024))),
        mem_limit=int(max(resources.scalar("mem"), MIN_MEM_MB) * 1024 * 1024),
        force_pull=bool(docker.get("force_pull_image")))
    spec.entrypoint, spec.command = _command(task.get("command") or {})
    terminal = task_terminal(task.get("container"))
    spec.tty = terminal is not False
    spec.window = terminal if isinstance(terminal, WindowSize) else None
    for key, val in params:
        _apply_parameter(spec, key, val)
    return spec


def _environment(task: dict[str, Any], framework_id: str, agent_id: str) -> dict[str, str]:
    env = {ENV_TASK_ID: task["task_id"]["value"], "MESOS_FRAMEWORK_ID": framework_id,
           "MESOS_AGENT_ID": agent_id}
    for var in ((task.get("command") or {}).get("environment") or {}).get("variables") or []:
        if isinstance(var, dict) and var.get("name"):
            env[var["name"]] = str(var.get("value", ""))
    env["MESOS_SANDBOX"] = SANDBOX_MOUNT
    return env


def _command(command: dict[str, Any]) -> tuple[list[str] | None, list[str] | None]:
    """(entrypoint, command): shell=true -> /bin/sh -c VALUE; else VALUE and arguments after the image's entrypoint."""
    if command.get("shell", True):
        if not command.get("value"):
            raise SpecError("CommandInfo with shell=true needs a value")
        return ["/bin/sh", "-c"], [command["value"]]
    argv = ([command["value"]] if command.get("value") else []) + [str(a) for a in command.get("arguments") or []]
    return None, (argv or None)


def _volumes(container: dict[str, Any], sandbox: Path, allowed: list[Path],
             persistent: list[Any]) -> dict[str, dict[str, str]]:
    out = {str(sandbox): {"bind": SANDBOX_MOUNT, "mode": "rw"}}
    for mount in persistent:
        cpath = mount.container_path
        out[str(mount.directory)] = {"bind": cpath if cpath.startswith("/") else f"{SANDBOX_MOUNT}/{cpath}",
                                     "mode": "ro" if mount.read_only else "rw"}
    for v in container.get("volumes") or []:
        cpath = v["container_path"]
        if not cpath.startswith("/"):
            cpath = f"{SANDBOX_MOUNT}/{cpath}"
        host = v.get("host_path")
        if not host:
            raise SpecError(f"volume {cpath} has no host_path (only host volumes are supported)")
        out[_host_path(host, sandbox, allowed)] = {"bind": cpath, "mode": v.get("mode", "RW").lower()}
    return out


def _host_path(host: str, sandbox: Path, allowed: list[Path]) -> str:
    """A volume's host path, resolved; confined to the sandbox (relative) or the allowed roots (absolute)."""
    if not host.startswith("/"):
        real = os.path.realpath(sandbox / host)
        if not _under(real, [sandbox]):
            raise SpecError(f"volume host_path {host!r} leaves the sandbox")
        return real
    real = os.path.realpath(host)
    if real in DOCKER_SOCKETS or host in DOCKER_SOCKETS:
        raise SpecError("the Docker socket is never mounted into task containers")
    if not _under(real, allowed):
        roots = ":".join(str(r) for r in allowed) or "(none)"
        raise SpecError(f"volume host_path {host} is outside the agent's allowed host paths {roots} "
                        "(agent flag --allowed-host-paths)")
    return real


def _under(path: str, roots: list[Path]) -> bool:
    for root in roots:
        r = os.path.realpath(root)
        if path == r or path.startswith(r.rstrip("/") + "/"):
            return True
    return False


def _apply_parameter(spec: DockerSpec, key: str, val: str) -> None:
    if key == "network-alias":
        spec.aliases.append(val)
    elif key == "label":
        k, _, v = val.partition("=")
        if k != MANAGED_LABEL and not k.startswith((AGENT_LABEL, TASK_LABEL, FRAMEWORK_LABEL)):
            spec.labels[k] = v
    elif key == "env":
        k, _, v = val.partition("=")
        spec.environment[k] = v
    elif key == "shm-size":
        spec.shm_size = val
    elif key == "ulimit":
        spec.ulimits.append(parse_ulimit(val))
    elif key == "workdir":
        spec.working_dir = val
    elif key == "user":
        spec.user = val
