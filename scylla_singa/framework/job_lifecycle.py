"""A job's lifecycle as an explicit transition table.

Every state change of a job goes through `transition`, which refuses a pair
that is not in the table and says so with the job's history (dask's worker
state machine does the same for tasks). The table is the documentation:

    PREPARING -> WAITING -> LAUNCHING -> RUNNING -> FINISHED
    a process fails:   LAUNCHING/RUNNING -> RESTARTING -> BACKOFF -> WAITING
    out of restarts:   LAUNCHING/RUNNING/RESTARTING -> FAILING -> FAILED
    user kill:         any live state -> KILLING -> KILLED
"""

from __future__ import annotations

from .model import Job, JobState as S

ALLOWED: dict[S, frozenset[S]] = {
    S.PREPARING: frozenset({S.WAITING, S.FAILED, S.KILLED}),
    S.WAITING: frozenset({S.LAUNCHING, S.FAILED, S.KILLED}),
    S.LAUNCHING: frozenset({S.RUNNING, S.FINISHED, S.RESTARTING, S.FAILING, S.KILLING}),
    S.RUNNING: frozenset({S.FINISHED, S.RESTARTING, S.FAILING, S.KILLING}),
    S.RESTARTING: frozenset({S.BACKOFF, S.FAILING, S.KILLING}),
    S.BACKOFF: frozenset({S.WAITING, S.KILLED}),
    S.FAILING: frozenset({S.FAILED}),
    S.KILLING: frozenset({S.KILLED}),
    S.FINISHED: frozenset(),
    S.FAILED: frozenset(),
    S.KILLED: frozenset(),
}


class InvalidJobTransition(RuntimeError):
    """A transition the table does not allow: a bug, reported with the job's history."""


def transition(job: Job, to: S, why: str, now: float) -> None:
    """Move `job` to `to`, recording why. Raises InvalidJobTransition."""
    if to not in ALLOWED[job.state]:
        trail = "; ".join(f"{s} ({w})" for _, s, w in job.history[-8:])
        raise InvalidJobTransition(f"job {job.job_id}: {job.state.value} -> {to.value} is not allowed "
                                   f"(asked because: {why}); history: {trail}")
    job.state = to
    job.history.append((now, to.value, why))
