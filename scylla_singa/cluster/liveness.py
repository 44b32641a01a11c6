"""What is actually alive in a cluster: engines, swarm membership, agents, masters, services."""

from __future__ import annotations

from typing import Any

import docker
import docker.errors

from . import engines, launcher
from .resource_plan import PROCESS_KINDS
from .state import State, info


def _service(host: docker.DockerClient | None, name: str) -> str:
    if host is None:
        return "unknown"
    try:
        c = host.containers.get(name)
    except docker.errors.NotFound:
        return "missing"
    health = (c.attrs.get("State", {}).get("Health") or {}).get("Status")
    return f"{c.status} ({health})" if health else c.status


def probe(state: State, host: docker.DockerClient | None) -> dict[str, Any]:
    """`info(state)` as a dict, plus the live state of each part ("running", "down", ...)."""
    out = info(state).to_dict()
    procs = {e.resource.name: e.facts for e in state.entries if e.resource.kind in PROCESS_KINDS and e.done}
    for node in out["nodes"]:
        socket = node["docker_host"].removeprefix("unix://")
        node["engine"] = "running" if engines.answers(socket) else "down"
        if node["engine"] == "running":
            sw = engines.info(socket).get("Swarm", {})
            node["swarm"] = sw.get("LocalNodeState", "inactive")
        facts = procs.get(f"{node['name']}-agent")
        node["agent_process"] = ("running" if launcher.running(facts.get("pid"), facts.get("start")) else "down") \
            if facts else "not started"
    out["master_processes"] = {
        name.removesuffix("-master"): "running" if launcher.running(f.get("pid"), f.get("start")) else "down"
        for name, f in procs.items() if name.endswith("-master")}
    out["service_containers"] = {svc: _service(host, container) for svc, container in out["services"].items()}
    out["skipped"] = [e.facts["skipped"] for e in state.entries if "skipped" in e.facts]
    return out
