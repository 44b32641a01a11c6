"""Static reservations (an agent started with `--resources "cpus(ml):1;..."`): a live Apache Mesos 1.12 master
and agent, and ours with the same resources, must show them the same way (`/master/state`, `/roles`,
GET_AGENTS' total and AgentInfo resources, the agent's `/state`) and answer the same calls the same way: a
static reservation cannot be unreserved, and dynamic reservations stack beside it.

Not in the sequence: a 409's text, whose parts Mesos lists in the order they were added to the agent (its
flags' order, then each operation's) and ours in a fixed order (unreserved first, by name)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.scylla_home import scylla_home_at

from .operator_sequence import compare, master_agent
from .real_mesos import MesosProcess, start_agent

RESOURCES = "cpus(ml):1;cpus:1;mem:1024;disk:1024;ports:[31000-31100]"


def _cpus(amount: float, **fields: Any) -> dict[str, Any]:
    return {"name": "cpus", "type": "SCALAR", "scalar": {"value": amount}, **fields}


def _sequence(agent_id: str) -> list[tuple[str, dict[str, Any]]]:
    def call(kind: str, resources: list[dict]) -> dict[str, Any]:
        return {"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, "resources": resources}}
    dynamic = [{"type": "DYNAMIC", "role": "ml"}]
    return [
        ("unreserve the static reservation", call("UNRESERVE_RESOURCES", [_cpus(1, role="ml")])),
        ("unreserve it, new form", call("UNRESERVE_RESOURCES", [_cpus(1, reservations=[{"type": "STATIC",
                                                                                          "role": "ml"}])])),
        ("reserve the unreserved cpu", call("RESERVE_RESOURCES", [_cpus(1, reservations=dynamic)])),
    ]


@pytest.fixture(scope="module")
def real_static_agent(mesos_install: Path, real_master: MesosProcess,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[MesosProcess]:
    agent = start_agent(mesos_install, tmp_path_factory.mktemp("mesos-agent"), real_master.address, RESOURCES)
    wait_until(lambda: _one_agent(real_master.address), 30, "the agent to register with the real master")
    yield agent
    agent.stop()


def _one_agent(address: str) -> bool:
    try:
        return bool(master_agent(address))
    except ValueError:
        return False


@pytest.fixture(scope="module")
def our_static_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMesos]:
    with scylla_home_at(tmp_path_factory.mktemp("home")):
        cluster = EmbeddedMesos([{"resources": RESOURCES}], simulate=True, insecure=True).start()
        yield cluster
        cluster.stop()


def test_static_reservations_are_shown_and_kept_as_mesos_does(real_master: MesosProcess,
                                                              real_static_agent: MesosProcess,
                                                              our_static_cluster: EmbeddedMesos) -> None:
    ours = (our_static_cluster.master_address, our_static_cluster.agent_addresses[0])
    found = compare((real_master.address, real_static_agent.address), ours, _sequence,
                    show_before={"unreserve the static reservation"})
    assert not found, found
