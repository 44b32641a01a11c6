"""Builders for framework tests: offers, status updates and job specs as Mesos JSON dicts."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from scylla_singa.delivery.job_files import Artifacts
from scylla_singa.framework.core_events import JobPrepared, SubmitJob
from scylla_singa.framework.model import JobSpec

REPO = Path(__file__).resolve().parents[3]
_ids = itertools.count(1)


def offer(agent: str, cpus: float = 4, mem: float = 4096, gpus: float = 0, hostname: str | None = None,
          net_bw: float | None = None, **attrs: str) -> dict[str, Any]:
    resources = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": cpus}, "role": "*"},
                 {"name": "mem", "type": "SCALAR", "scalar": {"value": mem}, "role": "*"}]
    if gpus:
        resources.append({"name": "gpus", "type": "SCALAR", "scalar": {"value": gpus}, "role": "*"})
    if net_bw is not None:
        resources.append({"name": "net_bw", "type": "SCALAR", "scalar": {"value": net_bw}, "role": "*"})
    return {"id": {"value": f"offer-{next(_ids)}"}, "framework_id": {"value": "fw"},
            "agent_id": {"value": agent}, "hostname": hostname or agent, "resources": resources,
            "attributes": [{"name": k, "type": "TEXT", "text": {"value": v}} for k, v in attrs.items()]}


def update(task_id: str, state: str, agent: str = "", reason: str = "", message: str = "") -> dict[str, Any]:
    s: dict[str, Any] = {"task_id": {"value": task_id}, "state": state, "agent_id": {"value": agent}}
    if reason:
        s["reason"] = reason
    if message:
        s["message"] = message
    return s


def spec(conf: str = "examples/digits-mlp/job.conf", job_id: str = "j1", policy: str = "spread",
         max_restarts: int = 2, cpus: float | None = None, mem_mb: int | None = None,
         submitted_at: float = 0.0) -> JobSpec:
    path = REPO / conf
    return JobSpec(job_id, str(path), path.read_text(), "singa:latest", policy, "volume", max_restarts=max_restarts,
                   cpus=cpus, mem_mb=mem_mb, submitted_at=submitted_at)


ARTIFACTS = Artifacts(network="scylla-j1", volumes=({"container_path": "job.conf", "host_path": "/x/job.conf",
                                                     "mode": "RO"},))


def submit_and_prepare(core, s: JobSpec, now: float = 0.0, cluster=None) -> list:
    out = core.handle(SubmitJob(s), now)
    out += core.handle(JobPrepared(s.job_id, ARTIFACTS, cluster), now)
    return out
