"""CREATE_VOLUMES, GROW_VOLUME, SHRINK_VOLUME and DESTROY_VOLUMES: the same sequence against a live Apache Mesos 1.12 master with one agent
and ours with one agent of the same resources. Every answer (status and text, the agent's id, pid and hostname
put aside), and what `/master/state`, `/roles`, GET_AGENTS and the agent's `/state` then show, must be the same.

Not in the sequence: a container path with '..' (ours refuses it: it would leave the sandbox), DESTROY of a
volume a task uses (tests/mesos/test_reservations.py), and a GROW of more than there is (its 409's text lists
the volume and the addition in the order Mesos added them, ours in a fixed order)."""

from __future__ import annotations

from typing import Any

from scylla_singa.mesos.embedded import EmbeddedMesos

from .operator_sequence import compare
from .real_mesos import MesosProcess

DYNAMIC = [{"type": "DYNAMIC", "role": "ml", "principal": "ops"}]


def _disk(size: float, **fields: Any) -> dict[str, Any]:
    return {"name": "disk", "type": "SCALAR", "scalar": {"value": size}, **fields}


def _volume(volume_id: str, path: str = "data", size: float = 64, mode: str = "RW") -> dict[str, Any]:
    return _disk(size, reservations=DYNAMIC, disk={"persistence": {"id": volume_id, "principal": "ops"},
                                                   "volume": {"mode": mode, "container_path": path}})


def _call(kind: str, agent_id: str, key: str, items: list[dict]) -> dict[str, Any]:
    return {"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, key: items}}


def _sequence(agent_id: str) -> list[tuple[str, dict[str, Any]]]:
    def create(*volumes: dict) -> dict[str, Any]:
        return _call("CREATE_VOLUMES", agent_id, "volumes", list(volumes))

    def destroy(*volumes: dict) -> dict[str, Any]:
        return _call("DESTROY_VOLUMES", agent_id, "volumes", list(volumes))

    def grow(volume: dict, addition: dict) -> dict[str, Any]:
        return {"type": "GROW_VOLUME", "grow_volume": {"agent_id": {"value": agent_id}, "volume": volume,
                                                       "addition": addition}}

    def shrink(volume: dict, subtract: float) -> dict[str, Any]:
        return {"type": "SHRINK_VOLUME", "shrink_volume": {"agent_id": {"value": agent_id}, "volume": volume,
                                                           "subtract": {"value": subtract}}}
    return [
        ("reserve disk", _call("RESERVE_RESOURCES", agent_id, "resources", [_disk(128, reservations=DYNAMIC)])),
        ("create", create(_volume("v1"))),
        ("create the same id", create(_volume("v1"))),
        ("create more than is reserved", create(_volume("v3", size=500))),
        ("create of unreserved disk", create(_disk(10, disk={"persistence": {"id": "u1"},
                                                            "volume": {"mode": "RW", "container_path": "x"}}))),
        ("create without DiskInfo", create(_disk(10, reservations=DYNAMIC))),
        ("create without a volume", create(_disk(10, reservations=DYNAMIC, disk={"persistence": {"id": "n1"}}))),
        ("create read-only", create(_volume("ro", "ro", 10, "RO"))),
        ("grow", grow(_volume("v1"), _disk(16, reservations=DYNAMIC))),
        ("grow by unreserved disk", grow(_volume("v1", size=80), _disk(16))),
        ("grow by nothing", grow(_volume("v1", size=80), _disk(0, reservations=DYNAMIC))),
        ("grow what is not a volume", grow(_disk(80, reservations=DYNAMIC), _disk(16, reservations=DYNAMIC))),
        ("grow by cpus", grow(_volume("v1", size=80), {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1},
                                                     "reservations": DYNAMIC})),
        ("shrink", shrink(_volume("v1", size=80), 16)),
        ("shrink to nothing", shrink(_volume("v1", size=64), 64)),
        ("shrink by nothing", shrink(_volume("v1", size=64), 0)),
        ("shrink a volume of another size", shrink(_volume("v1", size=99), 1)),
        ("destroy an unknown volume", destroy(_volume("nope"))),
        ("destroy", destroy(_volume("v1", size=64))),
        ("destroy again", destroy(_volume("v1", size=64))),
    ]


def test_volumes_are_answered_and_shown_as_mesos_does(real_master: MesosProcess, real_agent: MesosProcess,
                                                     our_one_agent_cluster: EmbeddedMesos) -> None:
    ours = (our_one_agent_cluster.master_address, our_one_agent_cluster.agent_addresses[0])
    found = compare((real_master.address, real_agent.address), ours, _sequence, show_before={"destroy"})
    assert not found, found
