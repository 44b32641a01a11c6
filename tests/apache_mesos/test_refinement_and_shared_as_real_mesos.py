"""Reservation refinement and shared persistent volumes through the operator API: the same sequence against a
live Apache Mesos 1.12 master with one agent and ours with one agent of the same resources. Every answer (status
and text, the agent's id, pid and hostname put aside), and what `/master/state`, `/roles`, GET_AGENTS and the
agent's `/state` then show, must be the same.

Not in the sequence: refinements and shared resources Mesos finds invalid. It refuses them in the call's
validation ("Failed to validate master::Call: Resource '...' is invalid: Invalid refined reservation: ..."),
ours for the same reason in the operation's ("Invalid RESERVE operation on agent ...: Invalid resources: ...").
The reasons are checked in tests/unit/mesos/test_reservations.py."""

from __future__ import annotations

from typing import Any

from scylla_singa.mesos.embedded import EmbeddedMesos

from .operator_sequence import compare
from .real_mesos import MesosProcess

ENG = {"type": "DYNAMIC", "role": "eng", "principal": "ops"}
ENG_ML = {"type": "DYNAMIC", "role": "eng/ml", "principal": "ops"}
ML = [{"type": "DYNAMIC", "role": "ml", "principal": "ops"}]


def _scalar(name: str, amount: float, **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "SCALAR", "scalar": {"value": amount}, **fields}


def _call(kind: str, agent_id: str, key: str, items: list[dict]) -> dict[str, Any]:
    return {"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, key: items}}


def _shared(size: float) -> dict[str, Any]:
    return _scalar("disk", size, reservations=ML, shared={}, disk={
        "persistence": {"id": "common", "principal": "ops"}, "volume": {"mode": "RW", "container_path": "common"}})


def _sequence(agent_id: str) -> list[tuple[str, dict[str, Any]]]:
    def reserve(kind: str, *items: dict) -> dict[str, Any]:
        return _call(kind, agent_id, "resources", list(items))
    return [
        ("reserve for eng", reserve("RESERVE_RESOURCES", _scalar("cpus", 1, reservations=[ENG]))),
        ("refine for eng/ml", reserve("RESERVE_RESOURCES", _scalar("cpus", 1, reservations=[ENG, ENG_ML]))),
        ("unreserve the refinement", reserve("UNRESERVE_RESOURCES", _scalar("cpus", 1, reservations=[ENG, ENG_ML]))),
        ("unreserve eng's", reserve("UNRESERVE_RESOURCES", _scalar("cpus", 1, reservations=[ENG]))),
        ("reserve disk for ml", reserve("RESERVE_RESOURCES", _scalar("disk", 100, reservations=ML))),
        ("create a shared volume", _call("CREATE_VOLUMES", agent_id, "volumes", [_shared(64)])),
        ("destroy the shared volume", _call("DESTROY_VOLUMES", agent_id, "volumes", [_shared(64)])),
    ]


def test_refinements_and_shared_volumes_are_answered_and_shown_as_mesos_does(
        real_master: MesosProcess, real_agent: MesosProcess, our_one_agent_cluster: EmbeddedMesos) -> None:
    ours = (our_one_agent_cluster.master_address, our_one_agent_cluster.agent_addresses[0])
    found = compare((real_master.address, real_agent.address), ours, _sequence,
                    show_before={"unreserve the refinement", "destroy the shared volume"})
    assert not found, found
