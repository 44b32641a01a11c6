"""Fixtures that run a real Apache Mesos master and agent (see real_mesos.py).

Every test here is marked `apache_mesos`. Without MESOS_HOME the fixtures fail
with the reason and the command that fixes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.codec import MASTER_OPERATOR, MediaType

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.scylla_home import scylla_home_at

from .operator_sequence import ONE_AGENT_RESOURCES
from .real_mesos import MISSING_MESOS, MesosProcess, mesos_home, operator_call, start_agent, start_master


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/apache_mesos/" in str(item.fspath):
            item.add_marker(pytest.mark.apache_mesos)


@pytest.fixture(scope="module")
def mesos_install() -> Path:
    home = mesos_home()
    if home is None:
        pytest.fail(MISSING_MESOS, pytrace=False)
    return home


@pytest.fixture(scope="module")
def real_master(mesos_install: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MesosProcess]:
    master = start_master(mesos_install, tmp_path_factory.mktemp("mesos-master"))
    yield master
    master.stop()


@pytest.fixture(scope="module")
def real_agent(mesos_install: Path, real_master: MesosProcess,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[MesosProcess]:
    agent = start_agent(mesos_install, tmp_path_factory.mktemp("mesos-agent"), real_master.address)

    def registered() -> bool:
        response, _ = operator_call(real_master.address, MASTER_OPERATOR, {"type": "GET_AGENTS"}, MediaType.PROTOBUF)
        return any(a.agent_info.port == agent.port for a in response.get_agents.agents)
    wait_until(registered, 30, f"the agent on port {agent.port} to register with the master")
    yield agent
    agent.stop()


@pytest.fixture(scope="module")
def our_one_agent_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMesos]:
    """Our master with one simulated agent of the real agent's resources, insecure like the real master of
    these tests (started without HTTP authentication)."""
    with scylla_home_at(tmp_path_factory.mktemp("home")):
        cluster = EmbeddedMesos([{"resources": ONE_AGENT_RESOURCES}], simulate=True, insecure=True).start()
        yield cluster
        cluster.stop()
