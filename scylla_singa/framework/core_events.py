"""Inputs to the framework core (events) and its outputs (instructions).

The core never touches a socket: the shell turns pymesos callbacks, timers
and user requests into these events, and carries out the instructions it
gets back (calls on the driver, Docker, delivery). dask's worker state
machine is the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scylla_singa.delivery.job_files import Artifacts
from scylla_singa.placement.snapshot import AgentView
from .model import JobSpec


# --- events -----------------------------------------------------------------

@dataclass(frozen=True)
class Registered:
    framework_id: str


@dataclass(frozen=True)
class Disconnected:
    pass


@dataclass(frozen=True)
class OffersReceived:
    offers: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class OfferRescinded:
    offer_id: str


@dataclass(frozen=True)
class StatusUpdate:
    status: dict[str, Any]


@dataclass(frozen=True)
class Tick:
    now: float


@dataclass(frozen=True)
class SubmitJob:
    spec: JobSpec
    progress_token: str = field(default="", repr=False)   # the job's secret for its progress reports


@dataclass(frozen=True)
class JobPrepared:
    job_id: str
    artifacts: Artifacts
    # Every agent at full size, when the master says (for the never-fits check).
    cluster: tuple[AgentView, ...] | None = None


@dataclass(frozen=True)
class JobPrepareFailed:
    job_id: str
    message: str


@dataclass(frozen=True)
class KillJob:
    job_id: str


@dataclass(frozen=True)
class AdoptJob:
    """A job from the store, to carry on after a framework restart."""

    job: Any  # model.Job


@dataclass(frozen=True)
class AcceptFailed:
    """The driver could not send an ACCEPT (not subscribed, connection broken, refused): its launch may never
    have reached the master. `offer_ids` are the offers it used, `task_ids` the tasks it launched."""

    offer_ids: tuple[str, ...]
    task_ids: tuple[str, ...]
    error: str


Event = (Registered | Disconnected | OffersReceived | OfferRescinded | StatusUpdate | Tick | SubmitJob
         | JobPrepared | JobPrepareFailed | KillJob | AdoptJob | AcceptFailed)


# --- instructions -----------------------------------------------------------

@dataclass(frozen=True)
class Accept:
    agent_id: str
    offer_ids: tuple[str, ...]
    tasks: tuple[dict[str, Any], ...]
    refuse_seconds: float


@dataclass(frozen=True)
class Decline:
    offer_ids: tuple[str, ...]
    refuse_seconds: float


@dataclass(frozen=True)
class Revive:
    pass


@dataclass(frozen=True)
class Suppress:
    pass


@dataclass(frozen=True)
class KillTask:
    task_id: str
    agent_id: str


@dataclass(frozen=True)
class Reconcile:
    task_ids: tuple[tuple[str, str], ...] = field(default=())  # (task id, agent id); empty = all


@dataclass(frozen=True)
class PrepareJob:
    job_id: str


@dataclass(frozen=True)
class Persist:
    job_id: str


@dataclass(frozen=True)
class JobEnded:
    job_id: str


Instruction = Accept | Decline | Revive | Suppress | KillTask | Reconcile | PrepareJob | Persist | JobEnded
