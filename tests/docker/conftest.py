"""Fixtures for tests that use the real Docker engine.

The engine and images come from `make setup`; if the engine does not answer,
these tests fail with that reason rather than skip. With SCYLLA_LEAK_CHECK=1
(set by `make test`), nothing labelled by scylla-singa may be left at the end
of the session: containers and networks that remain are removed and reported
as a failure (a leak in a cleanup path). It is off by default so that
several test sessions can share one engine while developing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker
import docker.errors
import pytest

from scylla_singa.swarm import JOB_LABEL, MANAGED_LABEL, ensure_swarm


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(f"no Docker engine answers ({exc}); run `make setup` first", pytrace=False)
    return client


@pytest.fixture(scope="session")
def swarm_manager(docker_client: docker.DockerClient):
    return ensure_swarm(docker_client)


@pytest.fixture(scope="session", autouse=True)
def no_leaks_at_the_end(docker_client: docker.DockerClient) -> Iterator[None]:
    yield
    if os.environ.get("SCYLLA_LEAK_CHECK") != "1":
        return
    containers = {c.id: c for label in (JOB_LABEL, f"{MANAGED_LABEL}=true")
                  for c in docker_client.containers.list(all=True, filters={"label": label})}.values()
    networks = docker_client.networks.list(filters={"label": f"{MANAGED_LABEL}=true"})
    for c in containers:
        c.remove(force=True)
    for n in networks:
        try:
            n.remove()
        except docker.errors.APIError:
            pass
    leaked = [f"container {c.name}" for c in containers] + [f"network {n.name}" for n in networks]
    assert not leaked, f"tests left Docker objects behind: {', '.join(leaked)}"
