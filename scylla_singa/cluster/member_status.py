"""`cluster status` on a machine of `cluster init`/`join`: every machine, its role and health.

What the master knows (its agents, active or not), what the first machine
runs (masters, services), and, on the swarm manager, the swarm's nodes (a
machine whose agent is gone but whose engine is still in the swarm shows
up too). The merge into rows is pure; `gather` does the asking.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from scylla_singa.mesos.api.credentials import AGENT_CREDENTIAL_FILE, CredentialsError, load_credential
from . import master_client
from .member_state import FIRST, MemberState


@dataclass(frozen=True)
class MachineRow:
    name: str
    address: str
    role: str       # "first: master-1, hdfs, agent" | "member: agent" | "left (swarm node down)" | "swarm node only"
    health: str     # "ok" | what is wrong
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def machine_rows(state: MemberState, agents: list[dict[str, Any]], first_health: dict[str, str],
                 swarm_nodes: list[dict[str, Any]]) -> list[MachineRow]:
    """One row per machine (pure). `first_health`: component -> "ok" or what is wrong, for the first machine's
    masters and services (known only there); `swarm_nodes`: the manager's view, else empty."""
    first_address = state.masters[0].rpartition(":")[0] if state.masters else ""
    swarm_by_addr = {str(n.get("Status", {}).get("Addr", "")): n for n in swarm_nodes}
    rows: list[MachineRow] = []
    seen: set[str] = set()
    for agent in agents:
        address = str(agent.get("pid", "")).rpartition("@")[2].rpartition(":")[0]
        if address in seen:
            continue
        seen.add(address)
        problems = [] if agent.get("active", True) else ["agent inactive (draining or disconnected)"]
        node = swarm_by_addr.get(address)
        if node is not None and node.get("Status", {}).get("State") != "ready":
            problems.append(f"swarm node {node.get('Status', {}).get('State')}")
        role = "member: agent"
        if address == first_address:
            role = "first: " + ", ".join([*(first_health or ["master"]), "agent"])
            problems += [f"{k}: {v}" for k, v in first_health.items() if v != "ok"]
        res, used = agent.get("resources", {}), agent.get("used_resources", {})
        detail = f"cpus {used.get('cpus', 0):g}/{res.get('cpus', 0):g}, mem {used.get('mem', 0):.0f}/" \
                 f"{res.get('mem', 0):.0f} MB"
        rows.append(MachineRow(str(agent.get("hostname", "?")), address, role, "; ".join(problems) or "ok", detail))
    if first_address and first_address not in seen:
        seen.add(first_address)
        problems = [f"{k}: {v}" for k, v in first_health.items() if v != "ok"]
        rows.append(MachineRow("(first machine)", first_address, "first: " + ", ".join(first_health),
                               "; ".join(problems) or "ok", "no agent"))
    for address, node in swarm_by_addr.items():
        if address and address not in seen:
            name = str(node.get("Description", {}).get("Hostname", "?"))
            if node.get("Status", {}).get("State") == "down":   # it left (or its engine is off) and has no agent
                rows.append(MachineRow(name, address, "left (swarm node down)", "ok",
                                       "`scylla-singa swarm gc --down-nodes` on the first machine forgets it"))
            else:
                rows.append(MachineRow(name, address, "swarm node only", "no agent registered"))
    return rows


def gather(state: MemberState) -> dict[str, Any]:
    """Ask the masters, the first machine's services and the swarm; returns the report `status` prints."""
    errors: list[str] = []
    try:
        cred = load_credential(Path(state.secrets_dir or "") / AGENT_CREDENTIAL_FILE)
    except CredentialsError as exc:
        cred = None
        errors.append(str(exc))
    first_health: dict[str, str] = {}
    if state.role == FIRST:
        for i, m in enumerate(state.masters, 1):
            first_health[f"master-{i}"] = _health(f"http://{m}/health")
        first_health.update(_services_health(state.services))
    agents = []
    if cred is not None:
        try:
            got = master_client.call(state.masters, cred, "GET", "/master/slaves")
            if got.status_code == 200:
                agents = got.json().get("slaves", [])
            else:
                errors.append(f"the master answered {got.status_code} to /master/slaves")
        except master_client.MasterUnreachable as exc:
            errors.append(str(exc))
    rows = machine_rows(state, agents, first_health, _swarm_nodes())
    return {"cluster": state.cluster, "role": state.role, "address": state.address, "status": state.status,
            "master": state.master, "webhdfs": state.webhdfs, "zk_hosts": state.zk_hosts,
            "machines": [r.to_dict() for r in rows], "errors": errors}


def _health(url: str) -> str:
    try:
        got = requests.get(url, timeout=5)
        return "ok" if got.status_code == 200 else f"answers {got.status_code}"
    except requests.RequestException as exc:
        return f"does not answer ({exc.__class__.__name__})"


def _services_health(names: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        client = docker.from_env(timeout=30)
        for name in names:
            try:
                c = client.containers.get(name)
                health = (c.attrs.get("State", {}).get("Health") or {}).get("Status", c.status)
                out[name.removeprefix("scylla-")] = "ok" if health == "healthy" else health
            except docker.errors.NotFound:
                out[name.removeprefix("scylla-")] = "container missing"
    except docker.errors.DockerException as exc:
        out.update({n.removeprefix("scylla-"): f"engine does not answer ({exc.__class__.__name__})" for n in names})
    return out


def _swarm_nodes() -> list[dict[str, Any]]:
    """The swarm's nodes when this engine manages the swarm, else []."""
    try:
        client = docker.from_env(timeout=30)
        if not client.info().get("Swarm", {}).get("ControlAvailable"):
            return []
        return [n.attrs for n in client.nodes.list()]
    except docker.errors.DockerException:
        return []
