"""What the framework's job view and its `/metrics` show, computed from jobs and progress.

Pure functions (no locks, no I/O): the caller hands in `Job` records, the
ProgressBook's history (dicts with step, loss, accuracy, phase, proc,
group, worker) and the store's timed progress rows (with `at`):

    job_row(job, summary, rate)                  -> one line of the job list
    job_detail(job, history, summary, rate)      -> the job page model
    curves(history)                              -> train/test/validate points per step
    steps_per_s(rows, now)                       -> training rate over the last window
    framework_metrics(jobs, summaries, rates)    -> Prometheus families
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

from scylla_singa.framework.model import Job, JobState
from scylla_singa.framework.progress_book import Summary
from .prometheus import Metric

PHASES = ("train", "test", "validate")
MAX_POINTS = 800          # per curve; longer histories are thinned evenly, keeping the newest point
RATE_WINDOW_S = 30.0      # steps/s is measured over this much recent progress
UNPLACED = "(not placed)"


def _mean(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def _thin(points: list[dict[str, Any]], limit: int = MAX_POINTS) -> list[dict[str, Any]]:
    if len(points) <= limit:
        return points
    stride = len(points) / (limit - 1)
    return [points[int(i * stride)] for i in range(limit - 1)] + [points[-1]]


def curves(history: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Per phase, one point per step: loss and accuracy averaged over the workers that reported it."""
    by: dict[str, dict[int, list[Mapping[str, Any]]]] = {p: defaultdict(list) for p in PHASES}
    for p in history:
        phase = p.get("phase") or "train"
        if phase in by and isinstance(p.get("step"), int):
            by[phase][p["step"]].append(p)
    out: dict[str, list[dict[str, Any]]] = {}
    for phase, steps in by.items():
        points = [{"step": s, "loss": _mean(r.get("loss") for r in rs),
                   "accuracy": _mean(r.get("accuracy") for r in rs), "workers": len(rs)}
                  for s, rs in sorted(steps.items())]
        out[phase] = _thin(points)
    return out


def steps_per_s(rows: Iterable[Mapping[str, Any]], now: float, window_s: float = RATE_WINDOW_S) -> float | None:
    """Training steps per second over the last `window_s`: each worker's rate, averaged.

    `rows` are timed progress records (`at`, `step`, `phase`, proc/group/worker).
    None when no worker has two train reports in the window (idle or too new).
    """
    per_worker: dict[tuple, list[tuple[float, int]]] = defaultdict(list)
    for r in rows:
        if (r.get("phase") or "train") == "train" and r.get("at") is not None and r.get("step") is not None \
                and r["at"] >= now - window_s:
            per_worker[(r.get("proc"), r.get("group"), r.get("worker"))].append((r["at"], r["step"]))
    rates = []
    for points in per_worker.values():
        points.sort()
        (t0, s0), (t1, s1) = points[0], points[-1]
        if t1 > t0 and s1 >= s0:
            rates.append((s1 - s0) / (t1 - t0))
    return sum(rates) / len(rates) if rates else None


def log_links(agent_id: str, task_id: str) -> dict[str, str]:
    """The job view's log viewer for one task (same origin: the framework reads the agent)."""
    return {name: "/ui/log?" + urlencode({"agent": agent_id, "task": task_id, "file": name})
            for name in ("stdout", "stderr")}


def job_row(job: Job, summary: Summary | None, rate: float | None) -> dict[str, Any]:
    """The job list's line: state, progress, last loss/accuracy, why it waits or failed."""
    final = job.result.get("final") or {}
    step = final.get("steps") if job.state is JobState.FINISHED and final.get("steps") is not None \
        else (summary.step if summary else 0)
    test_acc = final.get("test_accuracy") if final.get("test_accuracy") is not None else \
        (summary.test_accuracy if summary else None)
    return {
        "job": job.job_id, "name": job.plan.job, "state": job.state.value, "terminal": job.state.terminal,
        "policy": job.spec.policy, "image": job.spec.image, "nprocs": job.plan.nprocs, "attempt": job.attempt,
        "restarts": job.restarts, "max_restarts": job.spec.max_restarts, "train_steps": job.plan.train_steps,
        "step": step, "loss": summary.loss if summary else None, "accuracy": summary.accuracy if summary else None,
        "test_accuracy": test_acc, "samples_per_s": summary.samples_per_s if summary else None,
        "steps_per_s": rate if job.state is JobState.RUNNING else None,
        "waiting_reason": job.waiting_reason if job.state is JobState.WAITING else "",
        "failure": job.failure, "submitted_at": job.spec.submitted_at,
        "nhosts": len({t.hostname for t in job.tasks.values() if not t.terminal}),
    }


def process_rows(job: Job) -> list[dict[str, Any]]:
    """Each SINGA process of the plan with its demand and its current task (if any)."""
    tasks = {t.proc: t for t in job.tasks.values()}
    rows = []
    for p in job.plan.procs:
        t = tasks.get(p.id)
        rows.append({
            "id": p.id, "workers": [list(w) for w in p.spec.workers], "servers": [list(s) for s in p.spec.servers],
            "cpus": p.demand.cpus, "mem_mb": p.demand.mem_mb, "net_mbps": p.demand.net_mbps,
            "task": t.task_id if t else None, "agent_id": t.agent_id if t else None,
            "hostname": t.hostname if t else None, "state": t.state if t else None,
            "reason": t.reason if t else "", "message": t.message if t else "", "ip": t.ip if t else "",
            "logs": log_links(t.agent_id, t.task_id) if t and t.agent_id else None})
    return rows


def host_groups(procs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Processes grouped by the host their task runs on (hosts in name order), unplaced ones last."""
    groups: dict[str, dict[str, Any]] = {}
    for p in procs:
        host = p["hostname"] or UNPLACED
        g = groups.setdefault(host, {"host": host, "agent_id": p["agent_id"], "placed": p["hostname"] is not None,
                                     "procs": []})
        g["procs"].append(p["id"])
    return sorted(groups.values(), key=lambda g: (not g["placed"], g["host"]))


def edge_rows(job: Job, procs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The communication graph's edges; `cross` when both ends run on different hosts (network traffic)."""
    host = {p["id"]: p["hostname"] for p in procs}
    return [{"src": e.src, "dst": e.dst, "bytes_per_step": e.bytes_per_step,
             "cross": host.get(e.src) is not None and host.get(e.dst) is not None and host[e.src] != host[e.dst]}
            for e in job.plan.edges]


def job_detail(job: Job, history: Iterable[Mapping[str, Any]], summary: Summary | None,
               rate: float | None) -> dict[str, Any]:
    """The job page model: the row plus processes, hosts, edges, curves, restarts and the state history."""
    procs = process_rows(job)
    return {
        **job_row(job, summary, rate),
        "procs": procs, "hosts": host_groups(procs), "edges": edge_rows(job, procs),
        "curves": curves(history),
        "restart_reasons": list(job.restart_reasons),
        "events": [{"at": at, "state": state, "why": why} for at, state, why in job.history[-50:]],
        "conf_path": job.spec.conf_path,
    }


def framework_metrics(jobs: list[Job], summaries: Mapping[str, Summary | None],
                      rates: Mapping[str, float | None]) -> list[Metric]:
    """The framework's Prometheus families: jobs by state, and per job restarts, steps/s, step, loss, accuracy."""
    by_state = Metric("scylla_framework_jobs", "gauge", "Jobs of this framework process, by state.")
    for s in JobState:
        by_state.add(sum(1 for j in jobs if j.state is s), state=s.value)
    info = Metric("scylla_framework_job_info", "gauge", "One per job: its name, state and placement policy.")
    restarts = Metric("scylla_framework_job_restarts_total", "counter", "Gang restarts of each job.")
    rate = Metric("scylla_framework_job_steps_per_second", "gauge",
                  f"Training steps per second of each running job (over the last {RATE_WINDOW_S:g}s).")
    step = Metric("scylla_framework_job_step", "gauge", "Latest training step each job reported.")
    loss = Metric("scylla_framework_job_loss", "gauge", "Latest training loss of each job (mean over workers).")
    acc = Metric("scylla_framework_job_accuracy", "gauge", "Latest training accuracy of each job (mean over workers).")
    test = Metric("scylla_framework_job_test_accuracy", "gauge", "Latest test accuracy of each job.")
    for j in jobs:
        row = job_row(j, summaries.get(j.job_id), rates.get(j.job_id))
        info.add(1, job=j.job_id, name=j.plan.job, state=j.state.value, policy=j.spec.policy)
        restarts.add(j.restarts, job=j.job_id)
        rate.add(row["steps_per_s"] or 0.0, job=j.job_id)
        step.add(row["step"] or 0, job=j.job_id)
        for metric, key in ((loss, "loss"), (acc, "accuracy"), (test, "test_accuracy")):
            if row[key] is not None:
                metric.add(row[key], job=j.job_id)
    return [by_state, info, restarts, rate, step, loss, acc, test]
