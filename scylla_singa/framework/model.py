"""The framework's records: what was submitted, and what became of it.

JobSpec is the immutable submission (persisted as is); Job is the live
record the core mutates through its transition table; TaskRecord is one
process's current Mesos task.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from scylla_singa.contracts import DEFAULT_COMMAND, RUNTIME_APACHE_SINGA, RUNTIME_SINGA_PY
from scylla_singa.delivery.job_files import Artifacts
from scylla_singa.jobconf.job_limits import JobLimits
from scylla_singa.jobconf.plan import JobPlan, PlanOptions
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES

# The states after which the framework counts a task as gone from its attempt: Mesos's terminal
# ones, and also unreachable and unknown ones (Mesos may yet hear of them, but the gang cannot
# wait: it is restarted, and a task that comes back later is killed as an orphan).
ENDED_TASK_STATES = TERMINAL_TASK_STATES | {"TASK_UNREACHABLE", "TASK_UNKNOWN"}


class JobState(str, Enum):
    PREPARING = "PREPARING"    # network and job.conf delivery being set up
    WAITING = "WAITING"        # assembling the gang from offers
    LAUNCHING = "LAUNCHING"    # tasks accepted, not all running yet
    RUNNING = "RUNNING"        # every process running
    RESTARTING = "RESTARTING"  # a process failed: the rest of the gang is being killed
    BACKOFF = "BACKOFF"        # waiting before the gang is placed again
    RELAUNCHING = "RELAUNCHING"  # a launch was refused (its offers no longer valid): stopping the rest, no restart used
    FAILING = "FAILING"        # given up: killing what is left
    KILLING = "KILLING"        # the user asked to stop it
    FINISHED = "FINISHED"
    FAILED = "FAILED"
    KILLED = "KILLED"

    @property
    def terminal(self) -> bool:
        return self in (JobState.FINISHED, JobState.FAILED, JobState.KILLED)


@dataclass(frozen=True)
class JobSpec:
    """A submitted job, exactly as the user asked for it."""

    job_id: str
    conf_path: str
    conf_text: str
    image: str
    policy: str = "spread"
    deliver: str = "volume"
    command: str = DEFAULT_COMMAND
    max_restarts: int = 2
    cpus: float | None = None
    mem_mb: int | None = None
    steps_per_s: float = 10.0
    submitted_at: float = field(default_factory=time.time)
    runtime: str = RUNTIME_SINGA_PY         # the task contract the image keeps (framework/runtime_kind.py)
    workspace_dir: str | None = None        # `run --workspace`: a host directory shared with other jobs
    env: tuple[tuple[str, str], ...] = ()   # `run --env`: more environment for every task
    # `run --max-processes/--max-groups/--max-workers/--max-servers` (jobconf/job_limits.py): a re-plan of this
    # spec (store, core) must use the ceilings it was accepted under
    max_processes: int = JobLimits.max_processes
    max_groups: int = JobLimits.max_groups
    max_workers: int = JobLimits.max_workers
    max_servers: int = JobLimits.max_servers

    @property
    def apache_singa(self) -> bool:
        return self.runtime == RUNTIME_APACHE_SINGA

    @property
    def plan_options(self) -> PlanOptions:
        limits = JobLimits(self.max_processes, self.max_groups, self.max_workers, self.max_servers)
        return PlanOptions(cpus=self.cpus, mem_mb=self.mem_mb, steps_per_s=self.steps_per_s, limits=limits)


@dataclass
class TaskRecord:
    """The current Mesos task of one SINGA process."""

    task_id: str
    proc: int
    attempt: int
    agent_id: str
    hostname: str
    state: str = "TASK_STAGING"
    reason: str = ""
    message: str = ""
    ip: str = ""
    updated_at: float = 0.0

    @property
    def terminal(self) -> bool:
        return self.state in ENDED_TASK_STATES


@dataclass
class Job:
    """A job's live record."""

    spec: JobSpec
    plan: JobPlan
    state: JobState = JobState.PREPARING
    attempt: int = 0
    restarts: int = 0
    tasks: dict[str, TaskRecord] = field(default_factory=dict)
    artifacts: Artifacts | None = None
    waiting_reason: str = ""
    failure: str = ""
    failed_task: str = ""
    restart_reasons: list[str] = field(default_factory=list)
    not_before: float = 0.0
    kill_deadline: float = 0.0
    history: list[tuple[float, str, str]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    # The job's secret for its containers' progress reports (framework/api_auth.py): kept in the store's
    # own table, not in the record, and never in a repr (records and events get logged).
    progress_token: str = field(default="", repr=False)

    @property
    def job_id(self) -> str:
        return self.spec.job_id

    def live_tasks(self) -> list[TaskRecord]:
        return [t for t in self.tasks.values() if not t.terminal]


_UNSAFE = re.compile(r"[^a-z0-9-]+")


def new_job_id(name: str) -> str:
    """A DNS-safe job id from the job's name: `digits-mlp-3f9a1c`."""
    base = _UNSAFE.sub("-", name.lower()).strip("-")[:30] or "job"
    return f"{base}-{secrets.token_hex(3)}"
