"""Fixtures for tests that use the real Docker engine.

The engine and images come from `make setup`; if the engine does not answer,
these tests fail with that reason rather than skip. With SCYLLA_LEAK_CHECK=1
(set by `make test`), nothing labelled by scylla-singa that the session
created may be left at the end: that is reported as a failure (a leak in a
cleanup path).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import datetime, timezone

import docker
import docker.errors
import pytest

from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL
from scylla_singa.swarm.overlays import ensure_swarm


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
    """Fail the session if containers or networks it created are still there.

    Only objects created during this session count, and nothing is removed:
    another session sharing the engine keeps what it is using, and a leak
    stays visible for inspection.
    """
    started = datetime.now(timezone.utc)
    yield
    if os.environ.get("SCYLLA_LEAK_CHECK") != "1":
        return
    containers = {c.id: c for label in (JOB_LABEL, f"{MANAGED_LABEL}=true")
                  for c in docker_client.containers.list(ignore_removed=True, all=True,
                                                         filters={"label": label})}.values()
    networks = docker_client.networks.list(filters={"label": f"{MANAGED_LABEL}=true"})
    leaked = [f"container {c.name}" for c in containers if _created(c.attrs["Created"]) >= started]
    leaked += [f"network {n.name}" for n in networks if _created(n.attrs["Created"]) >= started]
    assert not leaked, f"tests left Docker objects behind: {', '.join(leaked)}"


def _created(stamp: str) -> datetime:
    """Docker's RFC 3339 timestamps carry nanoseconds; Python parses microseconds."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", stamp)
    assert m, f"unexpected Docker timestamp {stamp!r}"
    zone = "+00:00" if m.group(3) == "Z" else m.group(3)
    return datetime.fromisoformat(f"{m.group(1)}.{(m.group(2) or '0')[:6]:0<6}{zone}").astimezone(timezone.utc)
