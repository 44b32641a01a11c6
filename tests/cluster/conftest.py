"""Fixtures for tests on a real multi-host cluster on this machine (root, the host engine).

One cluster is shared by the whole session (bringing up namespaced engines
costs seconds each): 2 nodes, 1 master and an agent per node (when the
`master`/`agent` commands exist), HDFS and ZooKeeper, under a prefix and
subnets of its own (random, checked free) and a temporary SCYLLA_HOME, so it
never meets a developer's cluster or another test session's. Its teardown runs `down` and fails the session if anything of it is
left on the machine. Tests that need their own cluster use `own_cluster`,
which cleans up in the same way, also when the test fails.

The compose files are started through pytest-docker with Debian's
docker-compose v1 (`compose_services`).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import docker.errors
import pytest
from pytest_docker.plugin import Services, get_docker_services

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.lifecycle import down, up
from scylla_singa.cluster.state import ClusterInfo

from cluster_helpers import assert_clean, free_subnet_pair, unique_prefix

REPO = Path(__file__).resolve().parent.parent.parent
HERE = str(Path(__file__).resolve().parent)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cluster: builds network namespaces and Docker engines (root; slow)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if str(item.fspath).startswith(HERE):
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session")
def host_engine() -> docker.DockerClient:
    if os.geteuid() != 0:
        pytest.fail("cluster tests need root (namespaces, bridges, iptables, dockerd)", pytrace=False)
    try:
        client = docker.from_env(timeout=300)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(f"no Docker engine answers ({exc}); run `make setup` first", pytrace=False)
    for tag in ("scylla-tiny:latest", "scylla-hdfs:latest", "scylla-zookeeper:latest", "scylla-singa:latest"):
        try:
            client.images.get(tag)
        except docker.errors.ImageNotFound:
            pytest.fail(f"image {tag} is missing; run `make setup`", pytrace=False)
    return client


@pytest.fixture(scope="session")
def cluster_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("scylla-home")


@pytest.fixture(scope="session")
def cluster_config(cluster_home: Path, host_engine: docker.DockerClient) -> ClusterConfig:
    lan, svc = free_subnet_pair(host_engine)
    return ClusterConfig(nodes=2, masters=1, hdfs=True, zk=True, prefix=unique_prefix("s"), subnet=lan,
                         services_subnet=svc, images=("scylla-tiny:latest",),
                         resources="cpus:2;mem:2048;disk:4096;net_bw:1000", home=str(cluster_home))


@pytest.fixture(scope="session")
def cluster(cluster_config: ClusterConfig, host_engine: docker.DockerClient) -> Iterator[ClusterInfo]:
    """The session's cluster, up; removed (and checked gone) at the end, also after failures."""
    try:
        yield up(cluster_config, echo=lambda _: None)
    finally:
        problems = down(cluster_config, echo=lambda _: None, host=host_engine)
        assert not problems, problems
        assert_clean(cluster_config, host_engine)


@pytest.fixture
def own_cluster(host_engine: docker.DockerClient, tmp_path: Path) -> Iterator[Callable[..., ClusterConfig]]:
    """Make configs for a test's own small cluster; `down` + leak check afterwards, also on failure."""
    made: list[ClusterConfig] = []

    def make(**kwargs) -> ClusterConfig:
        lan, svc = free_subnet_pair(host_engine)
        cfg = ClusterConfig(**{"nodes": 1, "agents": False, "prefix": unique_prefix("o"), "subnet": lan,
                               "services_subnet": svc, "images": ("scylla-tiny:latest",),
                               "home": str(tmp_path / "home"), **kwargs})
        made.append(cfg)
        return cfg

    try:
        yield make
    finally:
        for cfg in made:
            down(cfg, echo=lambda _: None, host=host_engine)
        for cfg in made:
            assert_clean(cfg, host_engine)


# -- pytest-docker with Debian's docker-compose v1 ---------------------------
@pytest.fixture(scope="session")
def docker_compose_command() -> str:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is missing; run `make setup` (it installs Debian's docker-compose)",
                    pytrace=False)
    return "docker-compose"


@pytest.fixture(scope="session")
def docker_compose_file() -> list[str]:
    return [str(REPO / "compose" / "hdfs.yml"), str(REPO / "compose" / "zookeeper.yml")]


@pytest.fixture(scope="session")
def docker_compose_project_name() -> str:
    return f"scylla-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def compose_services(docker_compose_command: str, docker_compose_file: list[str],
                     docker_compose_project_name: str, host_engine: docker.DockerClient) -> Iterator[Services]:
    """HDFS and ZooKeeper from compose/ (`up -d`, then `down -v` at the end).

    Not pytest-docker's own `docker_services`, whose single session instance
    would be shared with any other directory's compose files.
    """
    with get_docker_services(docker_compose_command, docker_compose_file, docker_compose_project_name,
                             ["up -d"], ["down -v --remove-orphans"]) as services:
        yield services
