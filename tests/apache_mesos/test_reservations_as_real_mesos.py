"""RESERVE_RESOURCES and UNRESERVE_RESOURCES: the same sequence against a live Apache Mesos 1.12 master with
one agent and ours with one agent of the same resources. Every answer (status and text, the agent's id, pid
and hostname put aside), and what `/master/state`, `/roles` and GET_AGENTS then show, must be the same."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scylla_singa.mesos.embedded import EmbeddedMesos

from tests.support.scylla_home import scylla_home_at

from .operator_sequence import answered_and_shown, differences
from .real_mesos import MesosProcess

RESOURCES = "cpus:2;mem:1024;disk:1024;ports:[31000-31100]"   # the real agent's (real_mesos.start_agent)
CPUS = {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}, "reservations": [{"type": "DYNAMIC", "role": "ml"}]}
MEM = {"name": "mem", "type": "SCALAR", "scalar": {"value": 256}, "reservations": [
    {"type": "DYNAMIC", "role": "ml", "principal": "ops", "labels": {"labels": [{"key": "k", "value": "v"}]}}]}


def _call(kind: str, agent_id: str, resources: list[dict]) -> dict[str, Any]:
    return {"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, "resources": resources}}


def _sequence(agent_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("reserve", _call("RESERVE_RESOURCES", agent_id, [CPUS, MEM])),
        ("more than there is", _call("RESERVE_RESOURCES", agent_id, [{**CPUS, "scalar": {"value": 5}}])),
        ("unknown agent", _call("RESERVE_RESOURCES", "no-such-agent", [CPUS])),
        ("the old role field (static)", _call("RESERVE_RESOURCES", agent_id, [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}, "role": "ml"}])),
        ("a static reservation", _call("RESERVE_RESOURCES", agent_id, [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}, "reservations": [
                {"type": "STATIC", "role": "ml"}]}])),
        ("unreserved resources", _call("RESERVE_RESOURCES", agent_id, [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}}])),
        ("unreserve", _call("UNRESERVE_RESOURCES", agent_id, [CPUS])),
        ("unreserve again", _call("UNRESERVE_RESOURCES", agent_id, [CPUS])),
        ("unreserve without the labels", _call("UNRESERVE_RESOURCES", agent_id, [
            {**MEM, "reservations": [{"type": "DYNAMIC", "role": "ml", "principal": "ops"}]}])),
    ]


@pytest.fixture(scope="module")
def our_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMesos]:
    with scylla_home_at(tmp_path_factory.mktemp("home")):
        # insecure like the real master of these tests (started without HTTP authentication)
        cluster = EmbeddedMesos([{"resources": RESOURCES}], simulate=True, insecure=True).start()
        yield cluster
        cluster.stop()


def test_reservations_are_answered_and_shown_as_mesos_does(real_master: MesosProcess, real_agent: MesosProcess,
                                                          our_cluster: EmbeddedMesos) -> None:
    real = answered_and_shown(real_master.address, real_agent.address, _sequence, show_before={"unreserve"})
    ours = answered_and_shown(our_cluster.master_address, our_cluster.agent_addresses[0], _sequence,
                              show_before={"unreserve"})
    assert not differences(real, ours), differences(real, ours)
