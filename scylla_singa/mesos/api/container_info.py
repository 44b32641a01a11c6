"""The ContainerInfo rules of this cluster: what a task's container may ask for. Pure.

The master checks them before a task reaches an agent (`validate_container`,
TASK_ERROR on failure); the agent applies the same helpers while it builds
the container (mesos/agent/docker_spec.py). Both raise SpecError with a
message meant for the framework's user.

Mesos's Docker containerizer is the model: network HOST/BRIDGE/NONE, or
USER with exactly one `network_infos[].name`; port mappings only on BRIDGE
or USER and within the task's `ports`; docker parameters only from an
allow-list (nothing that widens privileges); volumes with a container path
and mode RO or RW.

A MESOS container with a Docker image runs on the Docker engine as the
Mesos containerizer would run it (`docker_equivalent`): the image's
filesystem, the host's network unless `network_infos` names a network (then
that network, as a USER one), the same volumes and sandbox, and the sandbox
as the working directory (the Mesos containerizer starts the command there;
the Docker containerizer keeps the image's own); `cached: false` pulls the
image again. APPC images are refused.
"""

from __future__ import annotations

import re
from typing import Any

from .resources import Resources

SANDBOX_MOUNT = "/mnt/mesos/sandbox"
NETWORKS = ("HOST", "BRIDGE", "NONE", "USER")
ALLOWED_PARAMETERS = ("network-alias", "label", "env", "shm-size", "ulimit", "workdir", "user")


class SpecError(ValueError):
    """The task's container cannot be run as asked; the message says why (sent as the status message)."""


def validate_container(container: dict[str, Any] | None, resources: Resources) -> None:
    """Check a ContainerInfo the master can judge alone; raises SpecError. None is valid (no container)."""
    if container is None:
        return
    if not isinstance(container, dict):
        raise SpecError("ContainerInfo must be an object")
    kind = container.get("type", "MESOS")
    if kind == "MESOS":
        if (container.get("mesos") or {}).get("image"):
            validate_container(docker_equivalent(container), resources)
        return
    if kind != "DOCKER":
        raise SpecError(f"ContainerInfo type {kind!r} is not supported (DOCKER or MESOS)")
    docker = container.get("docker")
    if not isinstance(docker, dict) or not docker.get("image"):
        raise SpecError("DockerInfo is missing an image")
    network = docker.get("network", "HOST")
    if network not in NETWORKS:
        raise SpecError(f"unknown Docker network mode {network!r} (one of {', '.join(NETWORKS)})")
    user_network_name(container, network)
    if docker.get("privileged"):
        raise SpecError("privileged containers are refused")
    for p in docker.get("parameters") or []:
        check_parameter(p)
    check_ports(docker, network, resources)
    for v in container.get("volumes") or []:
        if not isinstance(v, dict) or not v.get("container_path"):
            raise SpecError("every volume needs a container_path")
        if v.get("mode", "RW") not in ("RO", "RW"):
            raise SpecError(f"volume mode {v.get('mode')!r} is not RO or RW")


def runs_in_docker(container: dict[str, Any] | None) -> bool:
    """Whether the Docker engine runs this container: type DOCKER, or MESOS with a Docker image."""
    container = container or {}
    return container.get("type") == "DOCKER" or bool((container.get("mesos") or {}).get("image"))


def docker_equivalent(container: dict[str, Any]) -> dict[str, Any]:
    """A MESOS ContainerInfo with a Docker image as the DOCKER one the engine runs (module docstring);
    any other ContainerInfo as it is. Raises SpecError for an image that is not a Docker one."""
    image = (container.get("mesos") or {}).get("image") if container.get("type", "MESOS") == "MESOS" else None
    if not image:
        return container
    if image.get("type", "DOCKER") != "DOCKER" or not (image.get("docker") or {}).get("name"):
        raise SpecError("a MESOS container's image must be of type DOCKER with docker.name (APPC is not supported)")
    named = [i for i in container.get("network_infos") or [] if isinstance(i, dict) and i.get("name")]
    docker = {"image": image["docker"]["name"], "network": "USER" if named else "HOST",
              "force_pull_image": image.get("cached") is False,
              "parameters": [{"key": "workdir", "value": SANDBOX_MOUNT}]}
    out = {k: v for k, v in container.items() if k not in ("type", "mesos", "docker")}
    return {**out, "type": "DOCKER", "docker": docker}


def user_network_name(container: dict[str, Any], network: str) -> str | None:
    infos = container.get("network_infos") or []
    names = [i.get("name") for i in infos if isinstance(i, dict) and i.get("name")]
    if network != "USER":
        return None
    if len(infos) != 1 or len(names) != 1:
        raise SpecError("Docker network USER needs exactly one network_infos entry with a name "
                        f"(got {len(names)} names in {len(infos)} entries)")
    return names[0]


def check_parameter(p: Any) -> tuple[str, str]:
    if not isinstance(p, dict) or not isinstance(p.get("key"), str):
        raise SpecError(f"bad docker parameter {p!r}: needs key and value")
    key, val = p["key"].lstrip("-"), str(p.get("value", ""))
    if key not in ALLOWED_PARAMETERS:
        raise SpecError(f"docker parameter {key!r} is refused (it widens privileges or is not supported); "
                        f"allowed: {', '.join(ALLOWED_PARAMETERS)}")
    if key == "user":
        check_docker_user(val)
    if key in ("label", "env") and "=" not in val:
        raise SpecError(f"docker parameter {key}={val!r} must be NAME=VALUE")
    if key == "ulimit":
        parse_ulimit(val)
    return key, val


def numeric_uid(user: str) -> int | None:
    """The uid a user string names by number, however it is spelled ("0", "00", "+0", "-0", "0000:0" are all 0);
    None when its user part is a name. Docker and the kernel read a number with leading zeros or a plus sign
    as that number, so a check on the text alone ("0", "root") lets uid 0 through."""
    part = user.split(":", 1)[0].strip()
    return int(part) if re.fullmatch(r"[+-]?[0-9]+", part) else None


def check_docker_user(user: str) -> None:
    """Refuse a docker `user` value that is root in any spelling; a name other than root is resolved later,
    by the agent, against the image's /etc/passwd (mesos/agent/image_user.py)."""
    name = user.split(":", 1)[0].strip()
    if not name:
        raise SpecError(f"docker parameter user={user!r} names no user: give a non-root uid or user name")
    if name == "root" or numeric_uid(user) == 0:
        raise SpecError(f"docker parameter user={user!r} is refused: it is uid 0 (root); "
                        "containers run as a non-root user")


def parse_ulimit(val: str) -> tuple[str, int, int]:
    name, sep, limits = val.partition("=")
    soft, _, hard = limits.partition(":")
    try:
        return name, int(soft), int(hard or soft)
    except ValueError:
        raise SpecError(f"docker parameter ulimit={val!r} must be NAME=SOFT[:HARD]") from None


def check_ports(docker: dict[str, Any], network: str, resources: Resources) -> dict[str, int]:
    out: dict[str, int] = {}
    maps = docker.get("port_mappings") or []
    if maps and network in ("HOST", "NONE"):
        raise SpecError(f"port_mappings need network BRIDGE or USER, not {network}")
    ports = resources.ranges.get("ports", ())
    for m in maps:
        try:
            host, cont = int(m["host_port"]), int(m["container_port"])
        except (KeyError, TypeError, ValueError):
            raise SpecError(f"bad port mapping {m!r}") from None
        if not any(b <= host <= e for b, e in ports):
            raise SpecError(f"port mapping uses host port {host}, which is not in the task's ports resources")
        out[f"{cont}/{m.get('protocol', 'tcp').lower()}"] = host
    return out
