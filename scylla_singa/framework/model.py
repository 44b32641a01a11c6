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

from ..jobconf.plan import JobPlan, PlanOptions

TERMINAL_TASK_STATES = frozenset({
    "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED",
    "TASK_GONE", "TASK_GONE_BY_OPERATOR", "TASK_UNREACHABLE", "TASK_UNKNOWN"})
# `exec`: the command runs as `/bin/sh -c ...` (CommandInfo.shell), and a shell that is the
# container's PID 1 ignores SIGTERM, so a kill would always wait out its grace period; singa
# as PID 1 handles SIGTERM and stops at once.
DEFAULT_COMMAND = "exec singa -conf ./job.conf -procs_id {proc} -cluster ./cluster.json -workspace {workspace}"


class JobState(str, Enum):
    PREPARING = "PREPARING"    # network and job.conf delivery being set up
    WAITING = "WAITING"        # assembling the gang from offers
    LAUNCHING = "LAUNCHING"    # tasks accepted, not all running yet
    RUNNING = "RUNNING"        # every process running
    RESTARTING = "RESTARTING"  # a process failed: the rest of the gang is being killed
    BACKOFF = "BACKOFF"        # waiting before the gang is placed again
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

    @property
    def plan_options(self) -> PlanOptions:
        return PlanOptions(cpus=self.cpus, mem_mb=self.mem_mb, steps_per_s=self.steps_per_s)


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
        return self.state in TERMINAL_TASK_STATES


@dataclass(frozen=True)
class Artifacts:
    """What delivery and networking prepared for a job's tasks (pure data, persisted)."""

    network: str
    volumes: tuple[dict[str, Any], ...] = ()
    uris: tuple[dict[str, Any], ...] = ()
    workspace: str = "/workspace"
    env: tuple[tuple[str, str], ...] = ()


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


def task_id(job_id: str, proc: int, attempt: int) -> str:
    return f"{job_id}.proc-{proc}.a{attempt}"


def parse_task_id(value: str) -> tuple[str, int, int] | None:
    """(job id, proc, attempt) of a task id made by task_id(), else None."""
    m = re.fullmatch(r"(.+)\.proc-(\d+)\.a(\d+)", value)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def proc_hostname(job_id: str, proc: int) -> str:
    """The name process `proc` has on the job's overlay (a network alias)."""
    return f"{job_id}-proc-{proc}"
