"""Builders for the UI's view-model tests: jobs with tasks on hosts, progress histories, master state."""

from __future__ import annotations

import math
from typing import Any

from scylla_singa.contracts import task_id
from scylla_singa.framework.model import Job, JobState, TaskRecord
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import plan_job
from tests.unit.framework.builders import spec

DOWNPOUR = "examples/frameworks/downpour.conf"  # 4 worker processes + 2 server processes, 2 worker groups


def job(conf: str = DOWNPOUR, job_id: str = "dp-1", state: JobState = JobState.RUNNING,
        hosts: dict[int, str] | None = None, task_state: str = "TASK_RUNNING", attempt: int = 1, **fields: Any) -> Job:
    """A job of `conf` whose process p runs on hosts[p] (agent id `id-<host>`); no tasks when hosts is empty."""
    s = spec(conf, job_id=job_id)
    plan = plan_job(parse_job_text(s.conf_text, s.conf_path), s.plan_options)
    j = Job(s, plan, state=state, attempt=attempt)
    for proc, host in (hosts or {}).items():
        tid = task_id(job_id, proc, attempt)
        j.tasks[tid] = TaskRecord(tid, proc, attempt, f"id-{host}", host, state=task_state)
    for key, value in fields.items():
        setattr(j, key, value)
    return j


def history(job_id: str = "dp-1", steps: int = 100, every: int = 10, workers: tuple[tuple[int, int, int], ...] =
            ((0, 0, 0), (1, 0, 1)), test_every: int = 50) -> list[dict[str, Any]]:
    """PROGRESS records as the runtime sends them: per (proc, group, worker) every `every` steps, tests too."""
    out = []
    for step in range(every, steps + 1, every):
        for k, (proc, group, worker) in enumerate(workers):
            out.append({"job": job_id, "proc": proc, "group": group, "worker": worker, "step": step,
                        "phase": "train", "loss": 2.3 * math.exp(-step / 40) + 0.1 * k,
                        "accuracy": min(1.0, step / steps + 0.01 * k), "samples_per_s": 100.0})
        if step % test_every == 0:
            out.append({"job": job_id, "proc": 0, "group": 0, "worker": 0, "step": step, "phase": "test",
                        "loss": 2.0 * math.exp(-step / 40), "accuracy": step / steps * 0.9})
    return out


def slave(agent_id: str, hostname: str, total: dict[str, float], used: dict[str, float] | None = None,
          offered: dict[str, float] | None = None, active: bool = True, port: int = 5051,
          attributes: dict[str, Any] | None = None) -> dict[str, Any]:
    """An agent as /master/state lists it."""
    def flat(d: dict[str, float] | None) -> dict[str, Any]:
        out: dict[str, Any] = {"cpus": 0.0, "mem": 0.0, "disk": 0.0, "gpus": 0.0, **(d or {})}
        return out
    return {"id": agent_id, "hostname": hostname, "port": port, "pid": f"slave(1)@10.0.0.1:{port}",
            "resources": {**flat(total), "ports": "[31000-32000]"}, "used_resources": flat(used),
            "offered_resources": flat(offered), "attributes": attributes or {}, "active": active,
            "registered_time": 1000.0}


def task(task_id_: str, agent_id: str, state: str = "TASK_RUNNING", ts: float = 1000.0, **extra: Any
         ) -> dict[str, Any]:
    return {"id": task_id_, "name": task_id_, "slave_id": agent_id, "state": state,
            "statuses": [{"state": state, "timestamp": ts}], **extra}


def framework(fw_id: str, name: str, used: dict[str, float], offered: dict[str, float] | None = None,
              tasks: list[dict[str, Any]] = (), completed: list[dict[str, Any]] = (), offers: int = 0,
              connected: bool = True, role: str = "*") -> dict[str, Any]:
    total = dict(used)
    for k, v in (offered or {}).items():
        total[k] = total.get(k, 0.0) + v
    return {"id": fw_id, "name": name, "role": role, "user": "root", "active": connected, "connected": connected,
            "resources": total, "used_resources": used, "offered_resources": offered or {},
            "tasks": list(tasks), "completed_tasks": list(completed),
            "offers": [{"id": f"o{i}"} for i in range(offers)]}


def state(slaves: list[dict[str, Any]], frameworks: list[dict[str, Any]] = (),
          completed_frameworks: list[dict[str, Any]] = ()) -> dict[str, Any]:
    return {"id": "m1", "hostname": "127.0.0.1", "leader": "master@127.0.0.1:5050", "version": "1.11.0",
            "start_time": 900.0, "slaves": slaves, "frameworks": list(frameworks),
            "completed_frameworks": list(completed_frameworks),
            "flags": {"allocator": "drf", "allocation_interval": "1.0secs"}}
