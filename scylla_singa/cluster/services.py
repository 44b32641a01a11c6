"""The cluster's services (Apache ZooKeeper, Apache HDFS) as containers of the host engine.

They sit on a Docker bridge network of their own (`<prefix>-svc`, bridge
`<prefix>-svc0`) with fixed addresses, so the host reaches them directly
and the nodes (and the nodes' containers, NATed by their engines) through
the host, which forwards between the cluster LAN and that bridge. Every
container and network here carries the label `scylla.cluster=<prefix>` (not
`scylla.managed`, which job leak checks sweep).
"""

from __future__ import annotations

import os

import docker
import docker.errors
from docker.types import IPAMConfig, IPAMPool

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import CLUSTER_LABEL


HOST_NETWORK = "host"


class ServiceError(RuntimeError):
    """A service container did not start or become healthy; the message has its log's end."""


def create_network(host: docker.DockerClient, name: str, subnet: str, gateway: str, bridge: str,
                   label: str) -> dict:
    """The services bridge network; kept when it exists with our label. Returns {id}."""
    for net in host.networks.list(names=[name]):
        if net.name == name:
            if (net.attrs.get("Labels") or {}).get(CLUSTER_LABEL) != label:
                raise ServiceError(f"Docker network {name} exists but is not this cluster's; remove it")
            return {"id": net.id}
    net = host.networks.create(name, driver="bridge", labels={CLUSTER_LABEL: label},
                               ipam=IPAMConfig(pool_configs=[IPAMPool(subnet=subnet, gateway=gateway)]),
                               options={"com.docker.network.bridge.name": bridge})
    return {"id": net.id}


def remove_network(host: docker.DockerClient, name: str, **_: object) -> None:
    for net in host.networks.list(names=[name]):
        if net.name == name:
            try:
                net.remove()
            except docker.errors.NotFound:
                pass


def start(host: docker.DockerClient, name: str, image: str, network: str, address: str, label: str,
          env: dict[str, str], data_dir: str, uid: int, restart: bool = False) -> dict:
    """Start the service container (keep a running one). Returns {id}. Does not wait for health.

    With `restart`, the engine restarts it after a crash or a reboot (a machine's long-lived service).
    Its /data is `data_dir` on the host (owned by the image's user `uid`), so
    the cluster's directory holds the service's state and no Docker volume
    is left behind.
    """
    try:
        existing = host.containers.get(name)
        if existing.status == "running" and (existing.labels or {}).get(CLUSTER_LABEL) == label:
            return {"id": existing.id}
        if (existing.labels or {}).get(CLUSTER_LABEL) != label:
            raise ServiceError(f"container {name} exists but is not this cluster's; remove it")
        existing.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    try:
        host.images.get(image)
    except docker.errors.ImageNotFound:
        raise ServiceError(f"image {image} is missing: run `scylla-singa images build`") from None
    os.makedirs(data_dir, exist_ok=True)
    os.chown(data_dir, uid, uid)
    api = host.api
    # network "host": the engine's own network namespace (a machine of `cluster init`, where the service
    # listens on the machine's address); otherwise a bridge network with the service's fixed address.
    on_bridge = network != HOST_NETWORK
    created = api.create_container(
        image, name=name, hostname=name if on_bridge else None, environment=env,
        labels={CLUSTER_LABEL: label, "scylla.service": name}, volumes=["/data"],
        host_config=api.create_host_config(network_mode=network, init=True, binds={data_dir: {"bind": "/data",
                                                                                               "mode": "rw"}},
                                           restart_policy={"Name": "unless-stopped"} if restart else None,
                                           # on the host's network the container has the engine's hostname,
                                           # which the JVM resolves at start: give it the machine's address
                                           extra_hosts=None if on_bridge else {host.info()["Name"]: address}),
        networking_config=api.create_networking_config({network: api.create_endpoint_config(ipv4_address=address)})
        if on_bridge else None)
    api.start(created["Id"])
    return {"id": created["Id"]}


def wait_healthy(host: docker.DockerClient, container: str, timeout_s: float = 120, **_: object) -> None:
    """Wait until the image's HEALTHCHECK passes; ServiceError if the container stops."""
    def healthy() -> bool:
        c = host.containers.get(container)
        if c.status in ("exited", "dead"):
            raise ServiceError(f"{container} stopped; its log ends:\n{_logs(c)}")
        return (c.attrs.get("State", {}).get("Health") or {}).get("Status") == "healthy"
    try:
        wait_until(healthy, timeout_s, f"{container} to become healthy", interval_s=0.5)
    except TimeoutError as exc:
        raise ServiceError(f"{exc}; its log ends:\n{_logs(host.containers.get(container))}") from None


def _logs(c) -> str:
    return c.logs(tail=20).decode(errors="replace")


def remove(host: docker.DockerClient, name: str, **_: object) -> None:
    """Remove the container and its anonymous volumes; idempotent."""
    try:
        host.containers.get(name).remove(force=True, v=True)
    except docker.errors.NotFound:
        pass


def containers_of(host: docker.DockerClient, label: str) -> list:
    return host.containers.list(ignore_removed=True, all=True, filters={"label": f"{CLUSTER_LABEL}={label}"})


def networks_of(host: docker.DockerClient, label: str) -> list:
    return host.networks.list(filters={"label": f"{CLUSTER_LABEL}={label}"})
