"""The framework's tables: a job's lifecycle, and which events the core takes before and after registration."""

from __future__ import annotations

import pytest

from scylla_singa.common.transition_table import InvalidTransition, key_name
from scylla_singa.framework import core_events as ev
from scylla_singa.framework.core import CORE_TABLE, FrameworkCore
from scylla_singa.framework.job_lifecycle import JOB_TABLE, JobEvent as E, advance
from scylla_singa.framework.model import Job, JobState as S
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import plan_job
from tests.support.transition_tables import missing_pairs, sample_event
from .builders import offer, spec, update


def job_in(state: S) -> Job:
    s = spec()
    job = Job(s, plan_job(parse_job_text(s.conf_text, s.conf_path), s.plan_options))
    job.history.append((0.0, S.PREPARING.value, "submitted"))
    job.state = state
    return job


@pytest.mark.parametrize("state,event,to", [
    (S.PREPARING, E.PREPARED, S.WAITING),
    (S.PREPARING, E.NEVER_FITS, S.FAILED),
    (S.PREPARING, E.PREPARE_FAILED, S.FAILED),
    (S.WAITING, E.GANG_LAUNCHED, S.LAUNCHING),
    (S.LAUNCHING, E.ALL_RUNNING, S.RUNNING),
    (S.LAUNCHING, E.ALL_FINISHED, S.FINISHED),
    (S.RUNNING, E.ALL_FINISHED, S.FINISHED),
    (S.RUNNING, E.PROCESS_FAILED, S.RESTARTING),
    (S.RESTARTING, E.ATTEMPT_ENDED, S.BACKOFF),
    (S.BACKOFF, E.BACKOFF_OVER, S.WAITING),
    (S.RUNNING, E.GIVEN_UP, S.FAILING),
    (S.FAILING, E.ATTEMPT_ENDED, S.FAILED),
    (S.WAITING, E.USER_KILL, S.KILLED),
    (S.BACKOFF, E.USER_KILL, S.KILLED),
    (S.RUNNING, E.USER_KILL, S.KILLING),
    (S.RESTARTING, E.USER_KILL, S.KILLING),
    (S.KILLING, E.ATTEMPT_ENDED, S.KILLED),
], ids=lambda v: key_name(v) if not isinstance(v, E) else v.name)
def test_job_transitions(state, event, to) -> None:
    job = job_in(state)
    assert advance(job, event, "because", 5.0) is to
    assert job.state is to and job.history[-1] == (5.0, to.value, "because")


@pytest.mark.parametrize("state,event", missing_pairs(JOB_TABLE))
def test_every_job_pair_without_a_row_is_refused_with_the_story(state, event) -> None:
    job = job_in(state)
    with pytest.raises(InvalidTransition) as info:
        advance(job, event, "because", 5.0)
    err = info.value
    assert (err.machine, err.state, err.event) == ("job j1", state.value, f"{event.name} (because)")
    assert err.story == ("PREPARING (submitted)",) and "PREPARING (submitted)" in str(err)
    assert job.state is state and len(job.history) == 1


def test_finished_failed_and_killed_jobs_take_no_event() -> None:
    for state in (S.FINISHED, S.FAILED, S.KILLED):
        assert not [e for (s, e) in JOB_TABLE.rows if s is state]


# ---- the core's event table --------------------------------------------------------------------

def test_the_core_takes_jobs_before_it_is_registered_but_no_offers() -> None:
    core = FrameworkCore()
    assert core.registration == "unregistered"
    assert [type(i).__name__ for i in core.handle(ev.SubmitJob(spec()), 0)] == ["PrepareJob", "Persist"]
    with pytest.raises(InvalidTransition) as info:
        core.handle(ev.OffersReceived((offer("a1"),)), 1)
    assert (info.value.state, info.value.event) == ("unregistered", "OffersReceived")
    assert "unregistered <- SubmitJob" in info.value.story
    core.handle(ev.Registered("fw"), 2)
    assert core.registration == "registered"
    core.handle(ev.OffersReceived((offer("a1"),)), 3)


@pytest.mark.parametrize("state,event", missing_pairs(CORE_TABLE))
def test_every_core_pair_without_a_row_is_refused_with_the_story(state, event) -> None:
    core = FrameworkCore()
    core.handle(ev.Tick(0), 0)
    core.story.add("an earlier event")
    with pytest.raises(InvalidTransition) as info:
        core.handle(sample_event(event), 1)
    assert (info.value.state, info.value.event) == (state, event.__name__)
    assert "an earlier event" in info.value.story


def test_an_event_the_core_does_not_know_raises() -> None:
    core = FrameworkCore()
    core.handle(ev.Registered("fw"), 0)
    with pytest.raises(InvalidTransition, match="no transition from state 'registered' on PrepareJob"):
        core.handle(ev.PrepareJob("j1"), 1)  # an instruction fed back as an event


def test_every_core_event_type_has_a_row_once_registered() -> None:
    assert {e for s, e in CORE_TABLE.rows if s == "registered"} == set(ev.Event.__args__)


def test_a_status_update_of_a_task_nobody_knows_is_killed() -> None:
    core = FrameworkCore()
    core.handle(ev.Registered("fw"), 0)
    out = core.handle(ev.StatusUpdate(update("other.proc-0.a1", "TASK_RUNNING", "a1")), 1)
    assert out == [ev.KillTask("other.proc-0.a1", "a1")]
