"""Run one operator-call sequence against a master with one agent and record what comes back: each answer
(status, text) and, at chosen points, what the master and the agent show. Run on a live Apache Mesos and on
ours, the two records must be equal (the agent's own id, pid and hostname put aside)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from typing import Any

import requests

Sequence = Callable[[str], list[tuple[str, dict[str, Any]]]]
# The resources of real_mesos.start_agent's agent, which our one-agent cluster (conftest.py) is given too.
ONE_AGENT_RESOURCES = "cpus:2;mem:1024;disk:1024;ports:[31000-31100]"


def master_agent(address: str) -> dict[str, Any]:
    """The master's one agent, as `/master/state` shows it."""
    (agent,) = requests.get(f"http://{address}/master/state", timeout=10).json()["slaves"]
    return agent


def answered_and_shown(master: str, agent_address: str, sequence: Sequence,
                       show_before: Collection[str] = ()) -> list[tuple[str, Any]]:
    """The sequence's answers, and what is shown before each call named in `show_before` and at the end."""
    agent = master_agent(master)
    seen: list[tuple[str, Any]] = []
    for name, body in sequence(agent["id"]):
        if name in show_before:
            seen += _shown(master, agent_address)
        got = requests.post(f"http://{master}/api/v1", json=body, timeout=10)
        seen.append((name, (got.status_code, got.text)))
    seen += _shown(master, agent_address)
    text = json.dumps(seen)
    for own, placeholder in ((agent["pid"], "PID"), (agent["id"], "AGENT"), (f"({agent['hostname']})", "(HOST)")):
        text = text.replace(own, placeholder)
    return json.loads(text)


def compare(real: tuple[str, str], ours: tuple[str, str], sequence: Sequence,
            show_before: Collection[str] = ()) -> str:
    """Where the records of the sequence on the real (master, agent) and on ours differ ('' when they do not)."""
    return differences(answered_and_shown(*real, sequence, show_before), answered_and_shown(*ours, sequence,
                                                                                            show_before))


def differences(real: list[tuple[str, Any]], ours: list[tuple[str, Any]]) -> str:
    """Where two records differ, step by step ('' when they do not)."""
    lines = [f"{r[0]}:\n  Apache Mesos {r[1]}\n  ours         {o[1]}" for r, o in zip(real, ours) if r != o]
    if len(real) != len(ours):
        lines.append(f"{len(real)} steps against {len(ours)}")
    return "\n".join(lines)


def _shown(master: str, agent_address: str) -> list[tuple[str, Any]]:
    agent = master_agent(master)
    agents = requests.post(f"http://{master}/api/v1", json={"type": "GET_AGENTS"}, timeout=10,
                           headers={"Accept": "application/json"}).json()["get_agents"]["agents"]
    own = requests.get(f"http://{agent_address}/state", timeout=10).json()
    return [("state", {k: agent[k] for k in ("resources", "reserved_resources", "unreserved_resources")}),
            ("roles", requests.get(f"http://{master}/roles", timeout=10).json()),
            ("total_resources", _sorted(agents[0]["total_resources"])),
            ("agent_info resources", _sorted(agents[0]["agent_info"]["resources"])),
            ("agent's reserved_resources_full", {role: _sorted(items) for role, items in
                                                 own.get("reserved_resources_full", {}).items()})]


def _sorted(items: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True) for r in items)
