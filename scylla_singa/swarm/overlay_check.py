"""The overlay smoke check: two containers on a job overlay, one reaching the other by name.

Used by `scylla-singa swarm check` (part of `make demo`) and by the tests. It
proves the three things every job relies on: the engine can create an
attachable overlay, containers on it resolve each other's names, and TCP
flows between them. Everything it creates is removed, also on failure.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import docker
import docker.errors

from scylla_singa.contracts import JOB_LABEL
from .overlays import create_job_network, remove_containers, remove_job_network

PORT = 7000


class OverlayCheckError(RuntimeError):
    """The check ran but the containers could not talk; the message says what was seen."""


@dataclass(frozen=True)
class OverlayCheckResult:
    network: str
    server_name: str
    client_name: str
    server_ip: str
    seconds: float


def run_overlay_check(client: docker.DockerClient, image: str, job_id: str,
                      encrypted: bool = False, timeout_s: float = 60.0) -> OverlayCheckResult:
    """Run the check on a fresh overlay for `job_id`; raises OverlayCheckError on failure."""
    started = time.monotonic()
    token = uuid.uuid4().hex
    net = create_job_network(client, job_id, encrypted)
    server_name, client_name = f"{net.name}-server", f"{net.name}-client"
    labels = {JOB_LABEL: job_id}
    containers = []
    try:
        server = client.containers.create(image, ["nc", "-l", "-p", str(PORT)], name=server_name,
                                          hostname=server_name, network=net.name, labels=labels)
        containers.append(server)
        _start(server, "server")
        ip = _address_on(server, net.name)
        script = (f"i=0; while [ $i -lt {int(timeout_s * 5)} ]; do "
                  f"echo {token} | nc -w 2 {server_name} {PORT} && exit 0; i=$((i+1)); sleep 0.2; done; exit 1")
        peer = client.containers.create(image, ["sh", "-c", script], name=client_name, network=net.name,
                                        labels=labels)
        containers.append(peer)
        _start(peer, "client")
        _wait_exit(peer, timeout_s, "client")
        _wait_exit(server, 10, "server")
        received = server.logs(stdout=True, stderr=False).decode(errors="replace")
        if token not in received:
            raise OverlayCheckError(f"{server_name} did not receive the token; it got {received!r}; "
                                    f"client said {peer.logs().decode(errors='replace')!r}")
        return OverlayCheckResult(net.name, server_name, client_name, ip, time.monotonic() - started)
    finally:
        remove_containers(containers)
        remove_job_network(client, job_id)


def _start(container, role: str) -> None:
    try:
        container.start()
    except docker.errors.APIError as exc:
        raise OverlayCheckError(f"the {role} container did not start: {exc.explanation}") from None


def _address_on(container, network: str) -> str:
    container.reload()
    return container.attrs["NetworkSettings"]["Networks"].get(network, {}).get("IPAddress", "")


def _wait_exit(container, timeout_s: float, role: str) -> None:
    try:
        result = container.wait(timeout=timeout_s)
    except Exception as exc:  # requests' ReadTimeout or ConnectionError
        raise OverlayCheckError(f"the {role} container did not finish within {timeout_s:.0f}s ({exc})") from None
    if result.get("StatusCode") != 0:
        logs = container.logs().decode(errors="replace")[-500:]
        raise OverlayCheckError(f"the {role} container exited {result.get('StatusCode')}: {logs!r}")
