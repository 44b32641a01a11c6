"""PyPI's mesoshttp and avmesos samples as shipped: their task is a MESOS container with the Docker image
`debian`, which our agent runs on its Docker engine as the Mesos containerizer would.

No registry is reachable here, so `debian` cannot come from Docker Hub: for this module the Debian bookworm
image images/base builds from the Debian mirror (`debian:bookworm-slim`, the base of every project image) is
tagged `debian:latest`, and untagged afterwards when the tag was not there before. The samples run against our
master and a Docker agent, insecure and allowing root tasks, as tests/compat runs the clients (README
"Mesos compatibility" says why).
"""

from __future__ import annotations

from collections.abc import Iterator

import docker
import docker.errors
import pytest

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.compat.client_scenarios import CLIENTS, run_scenario

BASE = "debian:bookworm-slim"
SAMPLES = ["mesoshttp sample (MESOS container, Docker image)", "avmesos sample (MESOS container, Docker image)"]


@pytest.fixture(scope="module")
def debian_image(docker_client: docker.DockerClient) -> Iterator[None]:
    try:
        docker_client.images.get("debian:latest")
        yield
        return
    except docker.errors.ImageNotFound:
        pass
    try:
        docker_client.images.get(BASE).tag("debian", "latest")
    except docker.errors.ImageNotFound:
        pytest.fail(f"{BASE} is not on the engine: run `make images` (images/base/build.sh builds it)",
                    pytrace=False)
    yield
    docker_client.images.remove("debian:latest")   # only the tag: BASE still names the image


@pytest.fixture(scope="module")
def docker_agent_cluster(docker_client: docker.DockerClient, debian_image: None) -> Iterator[EmbeddedMesos]:
    if not (CLIENTS / "venv" / "bin" / "python").exists():
        pytest.skip(f"mesoshttp and avmesos are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    m = EmbeddedMesos([{"resources": "cpus:2;mem:2048;disk:1024;ports:[31000-31100]", "hostname": "samples"}],
                      docker_client=docker_client, allocation_interval=0.2, retry_interval=0.5,
                      insecure=True, allow_root_tasks=True)
    with m:
        yield m
        agent_ids = [a.agent_id for a in m.agents]
    for agent_id in agent_ids:  # stopping the cluster removed the samples' containers
        assert not docker_client.containers.list(ignore_removed=True, all=True,
                                                 filters={"label": f"scylla.agent={agent_id}"})


@pytest.mark.clients
@pytest.mark.parametrize("name", SAMPLES)
def test_sample_as_shipped_runs_its_debian_container_and_kills_it(docker_agent_cluster, name: str) -> None:
    works, output = run_scenario(docker_agent_cluster, name)
    assert works, f"{name} did not end TASK_KILLED; its output:\n{output}"
    assert "EVENT UPDATE TASK_RUNNING" in output, output
