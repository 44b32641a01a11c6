"""The cross-host overlay check: a container on one node reaches a container on another by name.

The multi-host variant of `scylla_singa.overlay_check`: the job overlay is
created on the swarm manager (the host engine), the server container runs
on one node engine and the client on another, so the bytes cross a real
VXLAN link between two network namespaces. Everything it creates is
removed, also on failure.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import docker
import docker.errors

from scylla_singa.contracts import JOB_LABEL
from scylla_singa.swarm.overlay_check import OverlayCheckError
from scylla_singa.swarm.overlays import create_job_network, remove_containers, remove_job_network

PORT = 7000


@dataclass(frozen=True)
class CrossNodeResult:
    network: str
    server: str
    client: str
    server_ip: str
    seconds: float


def run_cross_node_check(manager: docker.DockerClient, server_engine: docker.DockerClient,
                         client_engine: docker.DockerClient, image: str = "scylla-tiny:latest",
                         job_id: str | None = None, timeout_s: float = 60) -> CrossNodeResult:
    """Server on `server_engine`, client on `client_engine`, one overlay; OverlayCheckError if no bytes flow."""
    started = time.monotonic()
    job = job_id or f"xnode-{uuid.uuid4().hex[:8]}"
    token = uuid.uuid4().hex
    net = create_job_network(manager, job)
    server_name, client_name = f"{net.name}-server", f"{net.name}-client"
    made: list = []
    try:
        server = server_engine.containers.run(image, ["nc", "-l", "-p", str(PORT)], name=server_name,
                                              hostname=server_name, network=net.name, detach=True,
                                              labels={JOB_LABEL: job})
        made.append(server)
        server.reload()
        ip = server.attrs["NetworkSettings"]["Networks"].get(net.name, {}).get("IPAddress", "")
        script = (f"i=0; while [ $i -lt {int(timeout_s * 5)} ]; do echo {token} | nc -w 2 {server_name} {PORT} "
                  "&& exit 0; i=$((i+1)); sleep 0.2; done; exit 1")
        client = client_engine.containers.run(image, ["sh", "-c", script], name=client_name, network=net.name,
                                              detach=True, labels={JOB_LABEL: job})
        made.append(client)
        code = client.wait(timeout=timeout_s + 10).get("StatusCode")
        server.wait(timeout=15)
        got = server.logs(stdout=True, stderr=False).decode(errors="replace")
        if code != 0 or token not in got:
            raise OverlayCheckError(f"{client_name} could not send to {server_name} across nodes (exit {code}); "
                                    f"server got {got!r}; client said {client.logs().decode(errors='replace')!r}")
        return CrossNodeResult(net.name, server_name, client_name, ip, time.monotonic() - started)
    except docker.errors.APIError as exc:
        raise OverlayCheckError(f"cross-node check could not run: {exc.explanation}") from None
    finally:
        remove_containers(made)
        remove_job_network(manager, job)
