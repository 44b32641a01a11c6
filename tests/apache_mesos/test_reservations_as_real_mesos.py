"""RESERVE_RESOURCES and UNRESERVE_RESOURCES: the same sequence against a live Apache Mesos 1.12 master with
one agent and ours with one agent of the same resources. Every answer (status and text, the agent's id, pid
and hostname put aside), and what `/master/state`, `/roles` and GET_AGENTS then show, must be the same."""

from __future__ import annotations

from typing import Any

from scylla_singa.mesos.embedded import EmbeddedMesos

from .operator_sequence import compare
from .real_mesos import MesosProcess

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


def test_reservations_are_answered_and_shown_as_mesos_does(real_master: MesosProcess, real_agent: MesosProcess,
                                                          our_one_agent_cluster: EmbeddedMesos) -> None:
    ours = (our_one_agent_cluster.master_address, our_one_agent_cluster.agent_addresses[0])
    found = compare((real_master.address, real_agent.address), ours, _sequence, show_before={"unreserve"})
    assert not found, found
