"""A job's lifecycle as an explicit transition table: (state, what happened) -> next state.

Every state change of a job goes through `advance`, which looks the pair up
in JOB_TABLE and refuses one that is not there with InvalidTransition,
telling the job's story (its recent states and why it entered each). The
table is the documentation:

    PREPARING -> WAITING -> LAUNCHING -> RUNNING -> FINISHED
    a process fails:   LAUNCHING/RUNNING -> RESTARTING -> BACKOFF -> WAITING
    out of restarts:   LAUNCHING/RUNNING -> FAILING -> FAILED
    user kill:         PREPARING/WAITING/BACKOFF -> KILLED;
                       LAUNCHING/RUNNING/RESTARTING -> KILLING -> KILLED
"""

from __future__ import annotations

from enum import Enum

from scylla_singa.common.transition_table import TransitionTable
from .model import Job, JobState as S


class JobEvent(Enum):
    """What happened to a job (the core decides which, from Mesos's updates and the user's requests)."""

    PREPARED = "network and job files ready"
    NEVER_FITS = "the gang can never fit the cluster"
    PREPARE_FAILED = "network or job files could not be made"
    GANG_LAUNCHED = "every process placed and accepted"
    ALL_RUNNING = "every process running"
    ALL_FINISHED = "every process finished"
    PROCESS_FAILED = "a process failed; restarts left"
    GIVEN_UP = "a process failed; no restart"
    USER_KILL = "the user asked to stop it"
    ATTEMPT_ENDED = "every task of the attempt ended"
    BACKOFF_OVER = "the restart delay passed"


E = JobEvent
JOB_TABLE: TransitionTable[S] = TransitionTable("job", tuple(S), tuple(E), {
    (S.PREPARING, E.PREPARED): S.WAITING,
    (S.PREPARING, E.NEVER_FITS): S.FAILED,
    (S.PREPARING, E.PREPARE_FAILED): S.FAILED,
    (S.PREPARING, E.USER_KILL): S.KILLED,
    (S.WAITING, E.GANG_LAUNCHED): S.LAUNCHING,
    (S.WAITING, E.USER_KILL): S.KILLED,
    (S.LAUNCHING, E.ALL_RUNNING): S.RUNNING,
    (S.LAUNCHING, E.ALL_FINISHED): S.FINISHED,
    (S.LAUNCHING, E.PROCESS_FAILED): S.RESTARTING,
    (S.LAUNCHING, E.GIVEN_UP): S.FAILING,
    (S.LAUNCHING, E.USER_KILL): S.KILLING,
    (S.RUNNING, E.ALL_FINISHED): S.FINISHED,
    (S.RUNNING, E.PROCESS_FAILED): S.RESTARTING,
    (S.RUNNING, E.GIVEN_UP): S.FAILING,
    (S.RUNNING, E.USER_KILL): S.KILLING,
    (S.RESTARTING, E.ATTEMPT_ENDED): S.BACKOFF,
    (S.RESTARTING, E.USER_KILL): S.KILLING,
    (S.BACKOFF, E.BACKOFF_OVER): S.WAITING,
    (S.BACKOFF, E.USER_KILL): S.KILLED,
    (S.FAILING, E.ATTEMPT_ENDED): S.FAILED,
    (S.KILLING, E.ATTEMPT_ENDED): S.KILLED,
})


def story(job: Job) -> list[str]:
    """The job's recent states, each with why it entered it, oldest first."""
    return [f"{state} ({why})" for _, state, why in job.history[-20:]]


def advance(job: Job, event: JobEvent, why: str, now: float) -> S:
    """Move `job` on by `event`, recording why; its new state. Raises InvalidTransition."""
    to = JOB_TABLE.row(job.state, event, story(job), f"job {job.job_id}", f"{event.name} ({why})")
    job.state = to
    job.history.append((now, to.value, why))
    return to
