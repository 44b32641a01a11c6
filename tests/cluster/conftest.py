"""Fixtures for tests on a real multi-host cluster on this machine (root, the host engine).

One cluster is shared by the tests of each kind of Mesos (bringing up
namespaced engines and loading the images into them costs about a minute),
and the tests that use it run on both kinds, one after the other:

- `ours`: 3 nodes with a `scylla-singa agent` each (cpus:4, so a Hogwild job
  fits on 2 of them), 2 `scylla-singa master`s electing their leader through
  ZooKeeper;
- `apache`: the same nodes with real Apache Mesos 1.12 (`cluster up --mesos
  apache`): a `mesos-agent` with the Docker containerizer on each node's
  engine and 3 `mesos-master`s (ZooKeeper, replicated log, quorum 2: a
  majority must survive a killed leader). The install is MESOS_HOME
  (`make test` exports what tools/ensure_mesos.sh unpacked); without one
  these tests fail, saying so.

Both have HDFS and a 10 s agent timeout (masters ping every 2 s), a prefix
and subnets of their own (random, checked free) and a temporary SCYLLA_HOME,
so they never meet a developer's cluster or another test session's. The
first kind's cluster is taken down before the second comes up (the machine
has two cores); each teardown runs `down` and fails the session if anything
of it is left on the machine. A test runs on one kind only when marked
`@pytest.mark.mesos("ours")` (what it checks is the same on both, or only
exists on ours). Tests that need their own cluster use `own_cluster`, which
cleans up in the same way, also when the test fails.

Tests marked `disruptive` (fault injection: a dead engine, a cut-off node,
a killed master) run after the other tests of their cluster; each undoes
its fault in `finally` and the `healthy_cluster` fixture checks, before and
after, that every master, engine, agent and service is back. Measured
recovery times, per kind of Mesos, are printed at the end of the session
and written to docs/faults.md.

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

from scylla_singa.cluster.apache_mesos import MesosError, find_install
from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.state import ClusterInfo, State, load
from scylla_singa.cluster.up_down import down, up
from scylla_singa.common.waiting import wait_until
from tests.support.job_confs import REAL_SINGA_IMAGE
from tests.support.scylla_cli import ScyllaCli
from .cluster_helpers import (RECOVERIES, assert_clean, cluster_is_healthy, free_subnet_pair, unique_prefix,
                              write_fault_table)

REPO = Path(__file__).resolve().parent.parent.parent
HERE = str(Path(__file__).resolve().parent)


MESOS_KINDS = ("ours", "apache")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test on the shared cluster runs once per kind of Mesos (or the kinds its `mesos` marker names)."""
    if "cluster_config" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("mesos")
        kinds = marker.args if marker else MESOS_KINDS
        metafunc.parametrize("cluster_config", kinds, indirect=True, scope="session")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [i for i, item in enumerate(items) if _ours(item)]
    for i in ours:
        items[i].add_marker(pytest.mark.cluster)
        items[i].add_marker(pytest.mark.docker)
    # Tests with a cluster of their own first, then those on our Mesos's shared cluster, then Apache
    # Mesos's (one shared cluster at a time); on each, tests marked fresh_cluster first, fault tests last: should one fail to put the
    # shared cluster right, only fault tests follow it. Stable: file order otherwise.
    ordered = sorted((items[i] for i in ours), key=_order)
    for i, item in zip(ours, ordered):
        items[i] = item


def _order(item: pytest.Item) -> tuple[int, bool, bool]:
    kind = getattr(item, "callspec", None) and item.callspec.params.get("cluster_config")
    group = 0 if kind is None else 1 + MESOS_KINDS.index(kind)
    return (group, item.get_closest_marker("disruptive") is not None,
            item.get_closest_marker("fresh_cluster") is None)


def _ours(item: pytest.Item) -> bool:
    return str(item.fspath).startswith(HERE)


_CLUSTER_DOWN: list[Callable[[], None]] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """Take the shared cluster down after the last cluster test, not at the end of the whole session:
    the tests that follow get the machine's two cores back."""
    yield
    if _ours(item) and (nextitem is None or not _ours(nextitem)):
        while _CLUSTER_DOWN:
            _CLUSTER_DOWN.pop()()


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not RECOVERIES:
        return
    terminalreporter.section("recovery times (fault tests)")
    for r in RECOVERIES:
        terminalreporter.write_line(f"{r['mesos']:<7} {r['fault']:<32} {r['measure']:<52} {r['seconds']:>6.1f} s")
    write_fault_table(REPO / "docs" / "faults.md", RECOVERIES)


@pytest.fixture(scope="session")
def host_engine() -> docker.DockerClient:
    if os.geteuid() != 0:
        pytest.fail("cluster tests need root (namespaces, bridges, iptables, dockerd)", pytrace=False)
    try:
        client = docker.from_env(timeout=300)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(f"no Docker engine answers ({exc}); run `make setup` first", pytrace=False)
    for tag in ("scylla-tiny:latest", "scylla-hdfs:latest", "scylla-zookeeper:latest", "scylla-singa:latest",
                REAL_SINGA_IMAGE, "singa-py:latest"):
        try:
            client.images.get(tag)
        except docker.errors.ImageNotFound:
            pytest.fail(f"image {tag} is missing; run `make setup`", pytrace=False)
    return client


@pytest.fixture(scope="session")
def cluster_config(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                   host_engine: docker.DockerClient) -> ClusterConfig:
    """The shared cluster of one kind of Mesos (the test's parameter: "ours" or "apache")."""
    kind = request.param
    lan, svc = free_subnet_pair(host_engine)
    mesos = {"masters": 2}
    if kind == "apache":
        try:
            home = str(find_install(os.environ.get("MESOS_HOME") or None).home)
        except MesosError as exc:
            pytest.fail(f"the Apache Mesos cluster tests need a Mesos install: {exc} "
                        "(MESOS_HOME=$(tools/ensure_mesos.sh), as `make test` sets it)", pytrace=False)
        mesos = {"masters": 3, "mesos": "apache", "mesos_home": home}
    return ClusterConfig(nodes=3, hdfs=True, zk=True, prefix=unique_prefix("s" if kind == "ours" else "a"),
                         subnet=lan, services_subnet=svc,
                         images=tuple(dict.fromkeys(("scylla-tiny:latest", REAL_SINGA_IMAGE, "singa-py:latest"))),
                         resources="cpus:4;mem:4096;disk:4096;net_bw:1000",
                         home=str(tmp_path_factory.mktemp(f"scylla-home-{kind}")), agent_timeout=10.0, **mesos)


def keep_logs(config: ClusterConfig) -> None:
    """Copy the cluster's daemon logs (masters, agents, ZooKeeper, supervisors) into its home, which outlives
    the run directory `down` removes: what a failed test's master or agent did stays readable."""
    target = Path(config.home) / "cluster-logs" / config.prefix
    for root in (config.data_dir, config.run_dir):
        found = [f for f in _files(root) if f.suffix == ".log" or f.name in ("stdout", "stderr")]
        for log in found:
            dest = target / root.name / log.relative_to(root)
            dest.parent.mkdir(parents=True, exist_ok=True)
            with log.open("rb") as src:   # a task's output can be long: its last 256 KB say how it ended
                src.seek(max(0, log.stat().st_size - 262144))
                dest.write_bytes(src.read())


def _files(root: Path) -> Iterator[Path]:
    """Every file under `root`, not entering the node engines' image stores (many files, no logs)."""
    for parent, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "docker"]
        yield from (Path(parent) / f for f in files)


@pytest.fixture(scope="session")
def cluster(cluster_config: ClusterConfig, host_engine: docker.DockerClient) -> Iterator[ClusterInfo]:
    """The session's cluster of one kind, up with every agent registered; removed (and checked gone) after
    the last test on it, also after failures."""
    done: list[bool] = []

    def teardown() -> None:
        if done:
            return
        done.append(True)
        keep_logs(cluster_config)
        problems = down(cluster_config, echo=lambda _: None, host=host_engine)
        assert not problems, problems
        assert_clean(cluster_config, host_engine)
    _CLUSTER_DOWN.append(teardown)
    try:
        info = up(cluster_config, echo=lambda _: None)

        def why() -> str:
            return cluster_is_healthy(load(cluster_config.state_file), host_engine)
        wait_until(lambda: not why(), 120, "a leading master with every agent registered", explain=why)
        yield info
    finally:
        teardown()


@pytest.fixture
def cluster_state(cluster: ClusterInfo, cluster_config: ClusterConfig) -> State:
    """The session cluster's state file, freshly read (faults record new pids in it)."""
    state = load(cluster_config.state_file)
    assert state is not None
    return state


@pytest.fixture
def cli(cluster: ClusterInfo, cluster_config: ClusterConfig, host_engine: docker.DockerClient,
        tmp_path: Path) -> Iterator[ScyllaCli]:
    """`scylla-singa` against the session's cluster (its SCYLLA_HOME, its node engines); its jobs'
    containers and networks removed at the end."""
    c = ScyllaCli(Path(cluster_config.home), host_engine, tmp_path, {n.name: n.docker_host for n in cluster.nodes})
    try:
        yield c
    finally:
        c.cleanup()


@pytest.fixture
def healthy_cluster(cluster_state: State, host_engine: docker.DockerClient) -> Iterator[State]:
    """For fault tests: the cluster is whole before the test, and whole again after it (each test
    undoes its fault; this checks it did, so the next test starts from a working cluster)."""
    def why() -> str:
        return cluster_is_healthy(load(cluster_state.config.state_file), host_engine)

    wait_until(lambda: not why(), 90, "the cluster to be whole before the test", explain=why)
    yield cluster_state
    wait_until(lambda: not why(), 90, "the cluster to be whole again after the test", explain=why)


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
