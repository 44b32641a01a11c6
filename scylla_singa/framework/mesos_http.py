"""What the framework reads from Mesos over plain HTTP (operator endpoints).

Only endpoints Apache Mesos itself serves: the master's /master/state (to
size the cluster for the never-fits check and find agents) and an agent's
/state and /files/read (to find a task's sandbox and read its stdout and
stderr). So `logs` and failure reports work on a real cluster too.
"""

from __future__ import annotations

import re
from typing import Any

import requests

from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.placement.resource_vector import ResourceVector
from scylla_singa.placement.snapshot import AgentView
from .credential_source import WHERE_CREDENTIALS_COME_FROM

TIMEOUT_S = 10


class MesosHttpError(RuntimeError):
    pass


def _get(url: str, credential: Credential | None = None, **params: Any) -> Any:
    try:
        resp = requests.get(url, params=params, timeout=TIMEOUT_S,
                            headers=credential.headers() if credential else None)
    except requests.RequestException as exc:
        raise MesosHttpError(f"cannot reach {url}: {exc.__class__.__name__}") from None
    if resp.status_code == 401:
        raise MesosHttpError(f"{url} needs credentials ({'the ones given were refused' if credential else 'none given'})"
                             f": {WHERE_CREDENTIALS_COME_FROM}")
    if resp.status_code != 200:
        raise MesosHttpError(f"{url} answered {resp.status_code}: {resp.text[:200]}")
    return resp.json()


def _flat_resources(res: Any) -> dict[str, float]:
    """Mesos state endpoints give resources as {"cpus": 4.0, ...}; accept the list form too."""
    if isinstance(res, dict):
        return {k: float(v) for k, v in res.items() if isinstance(v, (int, float))}
    out: dict[str, float] = {}
    for r in res or []:
        if r.get("type", "SCALAR") == "SCALAR":
            out[r["name"]] = out.get(r["name"], 0.0) + float(r.get("scalar", {}).get("value", 0.0))
    return out


class MesosHttp:
    """Reads of one master and its agents, as `credential` (None: anonymously, for an insecure cluster)."""

    def __init__(self, master: str, credential: Credential | None = None) -> None:
        self.master = master
        self.credential = credential

    def master_state(self) -> dict[str, Any]:
        return _get(f"http://{self.master}/master/state", self.credential)

    def cluster_agents(self) -> tuple[AgentView, ...]:
        """Every registered agent at full size (for: can this job ever fit?).

        Agents that are disconnected right now count too: they may come
        back, and failing a job for a transient outage would be wrong.
        """
        views = []
        for s in self.master_state().get("slaves", []):
            res = _flat_resources(s.get("resources"))
            attrs = {k: v for k, v in (s.get("attributes") or {}).items()}
            bw = res.get("net_bw")
            if bw is None and "net_bw" in attrs:
                try:
                    bw = float(attrs["net_bw"])
                except (TypeError, ValueError):
                    bw = None
            views.append(AgentView(s["id"], s.get("hostname", s["id"]),
                                   ResourceVector(res.get("cpus", 0.0), res.get("mem", 0.0), res.get("gpus", 0.0)),
                                   attrs, bw))
        return tuple(views)

    def agent_url(self, agent_id: str) -> str:
        for s in self.master_state().get("slaves", []):
            if s.get("id") == agent_id:
                m = re.search(r"@([^:]+):(\d+)", s.get("pid", ""))
                if m:
                    return f"http://{m.group(1)}:{m.group(2)}"
                return f"http://{s.get('hostname')}:{s.get('port', 5051)}"
        raise MesosHttpError(f"the master does not know agent {agent_id}")

    def sandbox(self, agent_url: str, task_id: str) -> str | None:
        """The sandbox directory of `task_id` on that agent, live or completed."""
        state = _get(f"{agent_url}/state", self.credential)
        for fw in state.get("frameworks", []) + state.get("completed_frameworks", []):
            for ex in fw.get("executors", []) + fw.get("completed_executors", []):
                tasks = ex.get("tasks", []) + ex.get("completed_tasks", []) + ex.get("queued_tasks", [])
                if ex.get("id") == task_id or any(t.get("id") == task_id for t in tasks):
                    return ex.get("directory")
        return None

    def read(self, agent_url: str, path: str, offset: int, length: int) -> tuple[str, int]:
        """(data, offset of data) from the agent's /files/read; offset -1 asks for the size."""
        got = _get(f"{agent_url}/files/read", self.credential, path=path, offset=offset, length=length)
        return got.get("data", ""), int(got.get("offset", 0))

    def tail(self, agent_id: str, task_id: str, name: str = "stdout", max_bytes: int = 4096) -> str:
        url = self.agent_url(agent_id)
        directory = self.sandbox(url, task_id)
        if directory is None:
            raise MesosHttpError(f"agent {agent_id} has no sandbox for task {task_id}")
        _, size = self.read(url, f"{directory}/{name}", -1, 0)
        start = max(0, size - max_bytes)
        data, _ = self.read(url, f"{directory}/{name}", start, size - start)
        return data
