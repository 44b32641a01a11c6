"""The framework core on plain Mesos JSON: gangs, declines, failures, restarts, kills."""

from __future__ import annotations

import pytest

from scylla_singa.contracts import task_id
from scylla_singa.framework import core_events as ev
from scylla_singa.framework.core import CoreConfig, FrameworkCore
from scylla_singa.common.transition_table import InvalidTransition
from scylla_singa.framework.job_lifecycle import JobEvent, advance
from scylla_singa.framework.model import JobState as S
from scylla_singa.placement.resource_vector import ResourceVector
from scylla_singa.placement.snapshot import AgentView
from .builders import ARTIFACTS, offer, spec, submit_and_prepare, update

DOWNPOUR = "examples/frameworks/downpour.conf"


def kinds(instructions) -> list[str]:
    return [type(i).__name__ for i in instructions]


def of(instructions, cls):
    return [i for i in instructions if isinstance(i, cls)]


@pytest.fixture
def core() -> FrameworkCore:
    c = FrameworkCore(CoreConfig(gang_timeout_s=30, progress_url="http://10.0.0.1:8080/progress"))
    c.handle(ev.Registered("fw"), 0)
    return c


def test_submit_prepares_then_waits(core) -> None:
    out = core.handle(ev.SubmitJob(spec()), 0)
    assert kinds(out) == ["PrepareJob", "Persist"]
    assert core.jobs["j1"].state is S.PREPARING
    out = core.handle(ev.JobPrepared("j1", ARTIFACTS), 1)
    assert core.jobs["j1"].state is S.WAITING
    assert "Revive" in kinds(out)  # the core suppressed while idle; a waiting job revives


def test_single_process_job_launches_on_first_fitting_offer(core) -> None:
    submit_and_prepare(core, spec())
    out = core.handle(ev.OffersReceived((offer("a1", cpus=1), offer("a2", cpus=4))), 2)
    accept = of(out, ev.Accept)
    assert len(accept) == 1 and accept[0].agent_id == "a2"
    task = accept[0].tasks[0]
    assert task["task_id"]["value"] == task_id("j1", 0, 1)
    assert task["container"]["docker"]["network"] == "USER"
    assert task["container"]["network_infos"] == [{"name": "scylla-j1"}]
    assert {"key": "network-alias", "value": "j1-proc-0"} in task["container"]["docker"]["parameters"]
    env = {v["name"]: v["value"] for v in task["command"]["environment"]["variables"]}
    assert env["SCYLLA_PROGRESS_URL"] == "http://10.0.0.1:8080/progress" and env["MESOS_TASK_ID"] == task_id("j1", 0, 1)
    assert "-resume" not in task["command"]["value"]
    # the offer nobody needs is declined with a filter, and with nothing waiting the core suppresses
    declines = of(out, ev.Decline)
    assert declines and declines[0].refuse_seconds == 5.0 and "Suppress" in kinds(out)
    assert core.jobs["j1"].state is S.LAUNCHING


def test_gang_waits_for_offers_trickling_in_then_launches_all_at_once(core) -> None:
    submit_and_prepare(core, spec(DOWNPOUR))  # 6 processes of 1 cpu
    out = core.handle(ev.OffersReceived((offer("a1", cpus=2),)), 1)
    assert not of(out, ev.Accept) and not of(out, ev.Decline)  # held, not declined
    assert "0/1 agents can host process 2" in core.jobs["j1"].waiting_reason
    out = core.handle(ev.OffersReceived((offer("a2", cpus=2),)), 2)
    assert not of(out, ev.Accept)
    out = core.handle(ev.OffersReceived((offer("a3", cpus=2),)), 3)
    accepts = of(out, ev.Accept)
    assert sorted(a.agent_id for a in accepts) == ["a1", "a2", "a3"]
    assert sum(len(a.tasks) for a in accepts) == 6
    assert core.held == {}


def test_held_offers_are_released_after_the_gang_timeout(core) -> None:
    submit_and_prepare(core, spec(DOWNPOUR))
    core.handle(ev.OffersReceived((offer("a1", cpus=2), offer("a2", cpus=2))), 10)
    assert core.handle(ev.Tick(39), 39) == []
    out = core.handle(ev.Tick(40), 40)
    assert kinds(out) == ["Decline"] and len(out[0].offer_ids) == 2 and out[0].refuse_seconds == 1.0
    assert core.held == {} and core.jobs["j1"].state is S.WAITING


def test_never_fits_fails_fast_naming_the_short_resource(core) -> None:
    cluster = (AgentView("a1", "node1", ResourceVector(1, 8192)),)
    out = submit_and_prepare(core, spec(), cluster=cluster)
    job = core.jobs["j1"]
    assert job.state is S.FAILED
    assert "can never fit this cluster" in job.failure and "insufficient cpus (need 2, free 1)" not in job.failure
    assert "1 insufficient cpus" in job.failure
    assert "JobEnded" in kinds(out)


def launched(core, conf: str = "examples/digits-mlp/job.conf", agents=("a1",), **kw):
    s = spec(conf, **kw)
    submit_and_prepare(core, s)
    out = core.handle(ev.OffersReceived(tuple(offer(a, cpus=8) for a in agents)), 1)
    return [t["task_id"]["value"] for a in of(out, ev.Accept) for t in a.tasks]


def test_running_then_finished(core) -> None:
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    for tid in tids:
        core.handle(ev.StatusUpdate(update(tid, "TASK_RUNNING", "a1")), 2)
    assert core.jobs["j1"].state is S.RUNNING
    for tid in tids[:-1]:
        assert "JobEnded" not in kinds(core.handle(ev.StatusUpdate(update(tid, "TASK_FINISHED", "a1")), 3))
    out = core.handle(ev.StatusUpdate(update(tids[-1], "TASK_FINISHED", "a1")), 4)
    assert core.jobs["j1"].state is S.FINISHED and "JobEnded" in kinds(out)


def test_a_failed_process_restarts_the_whole_gang_with_backoff_and_resume(core) -> None:
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    for tid in tids:
        core.handle(ev.StatusUpdate(update(tid, "TASK_RUNNING", "a1")), 2)
    out = core.handle(ev.StatusUpdate(update(tids[0], "TASK_FAILED", "a1", message="exited 137")), 3)
    job = core.jobs["j1"]
    assert job.state is S.RESTARTING and job.restarts == 1
    assert sorted(k.task_id for k in of(out, ev.KillTask)) == sorted(tids[1:])
    for tid in tids[1:]:
        core.handle(ev.StatusUpdate(update(tid, "TASK_KILLED", "a1")), 4)
    assert job.state is S.BACKOFF and job.not_before == 4 + 2.0
    assert core.handle(ev.Tick(5), 5) == []
    out = core.handle(ev.Tick(6), 6)
    assert job.state is S.WAITING and "Revive" in kinds(out)
    out = core.handle(ev.OffersReceived(tuple(offer(a, cpus=8) for a in ("a1", "a2"))), 7)
    tasks = [t for a in of(out, ev.Accept) for t in a.tasks]
    assert len(tasks) == 6 and all(t["task_id"]["value"].endswith(".a2") for t in tasks)
    assert all(t["command"]["value"].endswith(" -resume") for t in tasks)


def test_out_of_restarts_fails_with_the_process_and_reason(core) -> None:
    tids = launched(core, max_restarts=0)
    out = core.handle(ev.StatusUpdate(update(tids[0], "TASK_FAILED", "a1", "REASON_COMMAND_EXECUTOR_FAILED",
                                             "Command exited with status 1")), 2)
    job = core.jobs["j1"]
    assert job.state is S.FAILED and "JobEnded" in kinds(out)
    assert "process 0" in job.failure and "exited with status 1" in job.failure
    assert "no restarts left" in job.failure


@pytest.mark.parametrize("state, reason, message", [
    pytest.param("TASK_FAILED", "REASON_CONTAINER_LAUNCH_FAILED", "No such image: nope:latest", id="missing-image"),
    pytest.param("TASK_ERROR", "REASON_TASK_INVALID", "USER network needs a name", id="invalid-task"),
    pytest.param("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED", "Command exited with status 2", id="bad-config"),
])
def test_hopeless_failures_are_not_retried(core, state, reason, message) -> None:
    tids = launched(core, max_restarts=5)
    core.handle(ev.StatusUpdate(update(tids[0], state, "a1", reason, message)), 2)
    job = core.jobs["j1"]
    assert job.state is S.FAILED and job.restarts == 0
    assert message in job.failure


def test_user_kill_kills_every_task(core) -> None:
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    out = core.handle(ev.KillJob("j1"), 2)
    assert sorted(k.task_id for k in of(out, ev.KillTask)) == sorted(tids)
    for tid in tids:
        out = core.handle(ev.StatusUpdate(update(tid, "TASK_KILLED", "a1")), 3)
    assert core.jobs["j1"].state is S.KILLED and "JobEnded" in kinds(out)


def test_kill_of_a_waiting_job_ends_it_at_once(core) -> None:
    submit_and_prepare(core, spec(DOWNPOUR))
    core.handle(ev.OffersReceived((offer("a1", cpus=1),)), 1)
    out = core.handle(ev.KillJob("j1"), 2)
    assert core.jobs["j1"].state is S.KILLED
    assert of(out, ev.Decline)  # nothing waits any more: held offers released


def test_tasks_that_never_report_after_a_kill_count_as_gone(core) -> None:
    tids = launched(core)
    core.handle(ev.KillJob("j1"), 2)
    core.handle(ev.Tick(50), 50)
    assert core.jobs["j1"].state is S.KILLING
    core.handle(ev.Tick(2 + 10 + 60), 2 + 10 + 60)
    assert core.jobs["j1"].state is S.KILLED
    assert core.jobs["j1"].tasks[tids[0]].state == "TASK_LOST"


def test_unknown_live_tasks_are_killed_as_orphans(core) -> None:
    out = core.handle(ev.StatusUpdate(update("old-3f.proc-0.a1", "TASK_RUNNING", "a9")), 1)
    assert out == [ev.KillTask("old-3f.proc-0.a1", "a9")]
    assert core.handle(ev.StatusUpdate(update("old-3f.proc-0.a1", "TASK_KILLED", "a9")), 2) == []


def test_reregistration_reconciles_known_tasks(core) -> None:
    tids = launched(core)
    out = core.handle(ev.Registered("fw"), 5)
    reconciles = of(out, ev.Reconcile)
    assert reconciles[0].task_ids == ((tids[0], "a1"),) and reconciles[1].task_ids == ()


def test_two_jobs_from_one_framework_share_the_offers(core) -> None:
    submit_and_prepare(core, spec(job_id="j1", submitted_at=1))
    submit_and_prepare(core, spec(job_id="j2", submitted_at=2))
    out = core.handle(ev.OffersReceived((offer("a1", cpus=2), offer("a2", cpus=2))), 3)
    accepts = of(out, ev.Accept)
    assert sorted(a.agent_id for a in accepts) == ["a1", "a2"]
    assert {core.jobs["j1"].state, core.jobs["j2"].state} == {S.LAUNCHING}


def test_illegal_transitions_raise_with_history(core) -> None:
    submit_and_prepare(core, spec())
    job = core.jobs["j1"]
    with pytest.raises(InvalidTransition) as info:
        advance(job, JobEvent.ALL_RUNNING, "test", 9)
    assert (info.value.machine, info.value.state) == ("job j1", "WAITING")
    assert info.value.event == "ALL_RUNNING (test)"
    assert info.value.story == ("PREPARING (submitted)", "WAITING (prepared)")
    assert job.state is S.WAITING


def test_an_adopted_job_keeps_its_running_tasks_through_reconciliation() -> None:
    first = FrameworkCore()
    first.handle(ev.Registered("fw"), 0)
    tids = launched(first)
    first.handle(ev.StatusUpdate(update(tids[0], "TASK_RUNNING", "a1")), 2)
    job = first.jobs["j1"]
    second = FrameworkCore()   # a restarted framework process
    second.handle(ev.AdoptJob(job), 10)
    out = second.handle(ev.Registered("fw"), 10)
    assert of(out, ev.Reconcile)[0].task_ids == ((tids[0], "a1"),)
    out = second.handle(ev.StatusUpdate(update(tids[0], "TASK_RUNNING", "a1", "REASON_RECONCILIATION")), 11)
    assert not of(out, ev.KillTask) and second.jobs["j1"].state is S.RUNNING


RESTART, FAIL, FINISHED = "restart the gang", "fail the job", "count as finished"


@pytest.mark.parametrize("state, outcome", [
    ("TASK_FAILED", RESTART),
    ("TASK_LOST", RESTART),
    ("TASK_ERROR", FAIL),            # an invalid task stays invalid: no retry
    ("TASK_DROPPED", RESTART),
    ("TASK_GONE", RESTART),
    ("TASK_GONE_BY_OPERATOR", RESTART),
    ("TASK_UNREACHABLE", RESTART),   # may come back, but the gang cannot wait for it
    ("TASK_UNKNOWN", RESTART),
    ("TASK_KILLED", RESTART),        # the framework did not ask for this kill
    ("TASK_FINISHED", FINISHED),
])
def test_what_a_running_process_reporting_each_state_does_to_its_job(core, state, outcome) -> None:
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    for tid in tids:
        core.handle(ev.StatusUpdate(update(tid, "TASK_RUNNING", "a1")), 2)
    job = core.jobs["j1"]
    assert job.state is S.RUNNING
    out = core.handle(ev.StatusUpdate(update(tids[0], state, "a1")), 3)
    kills = sorted(k.task_id for k in of(out, ev.KillTask))
    if outcome == FINISHED:
        assert kills == [] and job.state is S.RUNNING and job.restarts == 0
        assert job.tasks[tids[0]].state == "TASK_FINISHED" and "JobEnded" not in kinds(out)
        return
    assert kills == sorted(tids[1:])  # the rest of the gang is stopped either way
    assert job.state is (S.RESTARTING if outcome == RESTART else S.FAILING)
    assert job.restarts == (1 if outcome == RESTART else 0)
    assert state in job.failure and "process 0" in job.failure
    for tid in tids[1:]:
        out = core.handle(ev.StatusUpdate(update(tid, "TASK_KILLED", "a1")), 4)
    if outcome == RESTART:
        assert job.state is S.BACKOFF and "JobEnded" not in kinds(out)
    else:
        assert job.state is S.FAILED and "JobEnded" in kinds(out)


@pytest.mark.parametrize("state, killed", [
    ("TASK_RUNNING", True),
    ("TASK_STARTING", True),
    ("TASK_UNREACHABLE", True),   # it may still run behind a partition
    ("TASK_FINISHED", False),
    ("TASK_KILLED", False),
])
def test_an_update_of_a_task_from_an_earlier_attempt_kills_it_only_while_it_may_live(core, state, killed) -> None:
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    for tid in tids:
        core.handle(ev.StatusUpdate(update(tid, "TASK_RUNNING", "a1")), 2)
    core.handle(ev.StatusUpdate(update(tids[0], "TASK_FAILED", "a1")), 3)
    for tid in tids[1:]:
        core.handle(ev.StatusUpdate(update(tid, "TASK_KILLED", "a1")), 4)
    core.handle(ev.Tick(100), 100)
    core.handle(ev.OffersReceived(tuple(offer(a, cpus=8) for a in ("a1", "a2"))), 101)
    job = core.jobs["j1"]
    assert job.attempt == 2 and tids[1] not in job.tasks
    old = tids[1]  # of attempt 1, on agent a2 this time (as a reconciliation would report it)
    out = core.handle(ev.StatusUpdate(update(old, state, "a2")), 102)
    assert out == ([ev.KillTask(old, "a2")] if killed else [])
    assert job.state is S.LAUNCHING and job.attempt == 2 and old not in job.tasks


def test_an_unreachable_task_that_comes_back_while_its_gang_restarts_is_killed(core) -> None:
    """Its agent returned: the task is of this attempt but the attempt is over, so it must not run on."""
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    for tid in tids:
        core.handle(ev.StatusUpdate(update(tid, "TASK_RUNNING", "a1")), 2)
    out = core.handle(ev.StatusUpdate(update(tids[0], "TASK_UNREACHABLE", "a1")), 3)
    job = core.jobs["j1"]
    assert job.state is S.RESTARTING and ev.KillTask(tids[0], "a1") not in out  # unreachable: nothing to ask
    out = core.handle(ev.StatusUpdate(update(tids[0], "TASK_RUNNING", "a1")), 4)
    assert ev.KillTask(tids[0], "a1") in out and job.state is S.RESTARTING
    out = core.handle(ev.StatusUpdate(update(tids[0], "TASK_KILLING", "a1")), 5)
    assert not [i for i in out if isinstance(i, ev.KillTask)]  # already being killed: not asked again
