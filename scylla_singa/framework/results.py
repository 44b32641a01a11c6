"""What a finished or failed job reports: FINAL from process 0, or the failing process's last lines.

Read from the tasks' sandboxes through the agents' /files endpoints, which
Apache Mesos serves too.
"""

from __future__ import annotations

import json
from typing import Any

from scylla_singa.contracts import FINAL_PREFIX
from .mesos_http import MesosHttp, MesosHttpError
from .model import Job, JobState

LOG_LINES = 20


def parse_final(stdout: str) -> dict[str, Any] | None:
    """The last `FINAL {json}` line of a process's stdout."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(FINAL_PREFIX + " "):
            try:
                return json.loads(line[len(FINAL_PREFIX) + 1:])
            except json.JSONDecodeError:
                return None
    return None


def collect_result(mesos: MesosHttp, job: Job) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        if job.state is JobState.FINISHED:
            proc0 = next(t for t in job.tasks.values() if t.proc == 0)
            final = parse_final(mesos.tail(proc0.agent_id, proc0.task_id, "stdout", 64 * 1024))
            if final:
                out["final"] = final
        elif job.state is JobState.FAILED and job.failed_task in job.tasks:
            t = job.tasks[job.failed_task]
            lines = []
            for name in ("stderr", "stdout"):
                text = mesos.tail(t.agent_id, t.task_id, name, 16 * 1024)
                lines += [f"[{name}] {line}" for line in text.splitlines()[-LOG_LINES:]]
            out["last_lines"] = lines[-2 * LOG_LINES:]
    except (MesosHttpError, StopIteration, KeyError) as exc:
        out["result_error"] = str(exc)
    return out
