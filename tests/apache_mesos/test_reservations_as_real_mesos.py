"""RESERVE_RESOURCES and UNRESERVE_RESOURCES: the same sequence against a live Apache Mesos 1.12 master with
one agent and ours with one agent of the same resources. Every answer (status and text, the agent's id, pid
and hostname put aside), and what `/master/state`, `/roles` and GET_AGENTS then show, must be the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from scylla_singa.mesos.embedded import EmbeddedMesos

from tests.support.scylla_home import scylla_home_at

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


def _agent(address: str) -> dict[str, Any]:
    (agent,) = requests.get(f"http://{address}/master/state", timeout=10).json()["slaves"]
    return agent


def _run(address: str) -> list[tuple[str, Any]]:
    """The sequence's answers, then what the master shows; the agent's own names replaced by placeholders."""
    agent = _agent(address)
    seen: list[tuple[str, Any]] = []
    for name, body in _sequence(agent["id"]):
        if name == "unreserve":   # what the master shows with the reservations made
            seen += _shown(address)
        got = requests.post(f"http://{address}/api/v1", json=body, timeout=10)
        seen.append((name, (got.status_code, got.text)))
    seen += _shown(address)
    text = json.dumps(seen)
    for own, placeholder in ((agent["pid"], "PID"), (agent["id"], "AGENT"), (f"({agent['hostname']})", "(HOST)")):
        text = text.replace(own, placeholder)
    return json.loads(text)


def _shown(address: str) -> list[tuple[str, Any]]:
    agent = _agent(address)
    agents = requests.post(f"http://{address}/api/v1", json={"type": "GET_AGENTS"}, timeout=10,
                           headers={"Accept": "application/json"}).json()["get_agents"]["agents"]
    return [("state", {k: agent[k] for k in ("resources", "reserved_resources", "unreserved_resources")}),
            ("roles", requests.get(f"http://{address}/roles", timeout=10).json()),
            ("total_resources", sorted(json.dumps(r, sort_keys=True) for r in agents[0]["total_resources"]))]


def test_reservations_are_answered_and_shown_as_mesos_does(real_master: MesosProcess, real_agent: MesosProcess,
                                                          our_cluster: EmbeddedMesos) -> None:
    real, ours = _run(real_master.address), _run(our_cluster.master_address)
    differences = [f"{r[0]}:\n  Apache Mesos {r[1]}\n  ours         {o[1]}" for r, o in zip(real, ours) if r != o]
    assert len(real) == len(ours) and not differences, "\n".join(differences)
