"""The framework core on plain Mesos JSON: gangs, declines, failures, restarts, kills."""

from __future__ import annotations

import pytest

from scylla_singa.contracts import task_id
from scylla_singa.framework import core_events as ev
from scylla_singa.framework.core import CoreConfig, FrameworkCore
from scylla_singa.common.transition_table import InvalidTransition
from scylla_singa.framework.job_lifecycle import JobEvent, advance
from scylla_singa.framework.model import JobState as S
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import plan_job
from scylla_singa.placement.place import Placed, place
from scylla_singa.placement.policy import load_policy
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


# --- agents whose containers cannot run (Apache Mesos keeps offering an agent whose engine is dead) ---

ENGINE_GONE = ("Failed to launch container: Failed to run 'docker -H unix:///run/n1/docker.sock pull singa:latest': "
               "exited with status 1; stderr='Cannot connect to the Docker daemon at unix:///run/n1/docker.sock.'")


@pytest.mark.parametrize("state, reason, message", [
    pytest.param("TASK_FAILED", "", "Container exited with status 125", id="docker-run-failed-real-mesos"),
    pytest.param("TASK_FAILED", "REASON_CONTAINER_LAUNCH_FAILED", ENGINE_GONE, id="launch-failed-real-mesos"),
    pytest.param("TASK_FAILED", "REASON_EXECUTOR_TERMINATED", "the Docker engine stopped answering",
                 id="engine-died-ours"),
])
def test_a_restart_avoids_the_agent_whose_containers_failed_to_run(core, state, reason, message) -> None:
    launched(core, DOWNPOUR, agents=("a1", "a2", "a3"))
    job = core.jobs["j1"]
    on_a1 = next(t for t in job.tasks.values() if t.agent_id == "a1")
    for t in job.tasks.values():
        core.handle(ev.StatusUpdate(update(t.task_id, "TASK_RUNNING", t.agent_id)), 2)
    core.handle(ev.StatusUpdate(update(on_a1.task_id, state, "a1", reason, message)), 3)
    for t in job.live_tasks():
        core.handle(ev.StatusUpdate(update(t.task_id, "TASK_KILLED", t.agent_id)), 4)
    core.handle(ev.Tick(7), 7)
    assert job.state is S.WAITING and job.restarts == 1
    # a1 still offers (Apache Mesos does not know its engine is dead): declined for as long as it is set aside
    out = core.handle(ev.OffersReceived((offer("a1", cpus=8), offer("a2", cpus=8), offer("a3", cpus=8))), 8)
    declined = [d for d in of(out, ev.Decline) if len(d.offer_ids) == 1 and d.refuse_seconds > 5]
    assert declined and 20 < declined[0].refuse_seconds <= 30
    assert {a.agent_id for a in of(out, ev.Accept)} == {"a2", "a3"}


def test_a_set_aside_agent_is_named_while_a_job_waits_and_is_used_again_later(core) -> None:
    tids = launched(core, agents=("a1",))
    core.handle(ev.StatusUpdate(update(tids[0], "TASK_FAILED", "a1", "REASON_CONTAINER_LAUNCH_FAILED", ENGINE_GONE)), 2)
    core.handle(ev.Tick(5), 5)
    out = core.handle(ev.OffersReceived((offer("a1", cpus=8),)), 5)
    job = core.jobs["j1"]
    assert not of(out, ev.Accept) and job.state is S.WAITING
    assert "not placing on agents whose containers failed to run: a1: Failed to launch" in job.waiting_reason
    out = core.handle(ev.OffersReceived((offer("a1", cpus=8),)), 33)  # 30 s later it is tried again
    (accept,) = of(out, ev.Accept)
    assert accept.agent_id == "a1"
    core.handle(ev.StatusUpdate(update(accept.tasks[0]["task_id"]["value"], "TASK_RUNNING", "a1")), 34)
    assert core.agent_backoff.avoided(34) == {}  # a task runs there: trusted again


@pytest.mark.parametrize("state, reason, message", [
    pytest.param("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED", "Container exited with status 1", id="runtime-error"),
    pytest.param("TASK_FAILED", "", "Container exited with status 3", id="lost-peer"),
    pytest.param("TASK_KILLED", "", "Container exited with status 137", id="killed"),
    pytest.param("TASK_LOST", "REASON_AGENT_REMOVED", "Agent removed", id="agent-gone-mesos-stops-offering-it"),
])
def test_failures_of_the_task_itself_do_not_set_its_agent_aside(core, state, reason, message) -> None:
    tids = launched(core, agents=("a1",))
    core.handle(ev.StatusUpdate(update(tids[0], "TASK_RUNNING", "a1")), 2)
    core.handle(ev.StatusUpdate(update(tids[0], state, "a1", reason, message)), 3)
    assert core.agent_backoff.avoided(3) == {}


def test_set_aside_time_doubles_with_each_failure_up_to_five_minutes() -> None:
    from scylla_singa.framework.agent_backoff import AgentBackoff
    b = AgentBackoff()
    assert [b.failed("a1", "h1", 0.0, "x") for _ in range(6)] == [30, 60, 120, 240, 300, 300]
    assert b.avoided(299.0) == {"a1": 1.0} and b.avoided(300.0) == {}
    b.succeeded("a1")
    assert b.failed("a1", "h1", 0.0, "x") == 30


# A launch the master refused because an offer of its ACCEPT was rescinded or already used: Mesos's
# master answers each task of it with TASK_LOST (TASK_DROPPED for a PARTITION_AWARE framework) and
# REASON_INVALID_OFFERS. Nothing failed: the gang waits again and is placed at once, no restart used.
@pytest.mark.parametrize("state, agents, refused_on", [
    pytest.param("TASK_LOST", ("a1",), "a1", id="lost-whole-gang-on-one-agent"),
    pytest.param("TASK_DROPPED", ("a1",), "a1", id="dropped-whole-gang-on-one-agent"),
    pytest.param("TASK_LOST", ("a1", "a2", "a3"), "a2", id="lost-one-agent-of-three"),
    pytest.param("TASK_DROPPED", ("a1", "a2", "a3"), "a3", id="dropped-one-agent-of-three"),
])
def test_a_launch_refused_for_invalid_offers_places_the_gang_again_without_a_restart(
        core, state, agents, refused_on) -> None:
    launched(core, DOWNPOUR, agents=agents, max_restarts=0)
    job = core.jobs["j1"]
    refused = sorted(t.task_id for t in job.tasks.values() if t.agent_id == refused_on)
    launched_elsewhere = sorted(t.task_id for t in job.tasks.values() if t.agent_id != refused_on)
    for tid in launched_elsewhere:
        core.handle(ev.StatusUpdate(update(tid, "TASK_RUNNING", job.tasks[tid].agent_id)), 2)
    kills: list[str] = []
    for tid in refused:
        out = core.handle(ev.StatusUpdate(update(tid, state, "", "REASON_INVALID_OFFERS",
                                                 "Task launched with invalid offers: Offer o-1 is no longer valid")), 3)
        kills += [k.task_id for k in of(out, ev.KillTask)]
    assert sorted(kills) == launched_elsewhere  # a gang runs whole or not at all
    for tid in launched_elsewhere:
        out = core.handle(ev.StatusUpdate(update(tid, "TASK_KILLED", job.tasks[tid].agent_id)), 4)
    assert job.state is S.WAITING and job.restarts == 0 and job.restart_reasons == []
    assert job.not_before == 0.0 and "JobEnded" not in kinds(out) and job.failure == ""
    assert any("launch refused" in why for _, _, why in job.history)
    out = core.handle(ev.OffersReceived(tuple(offer(a, cpus=8) for a in ("a1", "a2", "a3"))), 4)  # no backoff
    assert sum(len(a.tasks) for a in of(out, ev.Accept)) == 6
    assert job.state is S.LAUNCHING and job.attempt == 2


def test_a_launch_refused_while_no_other_offers_are_held_revives_them(core) -> None:
    launched(core, DOWNPOUR, agents=("a1",), max_restarts=0)
    assert core.suppressed  # nothing waited after the launch
    job = core.jobs["j1"]
    out: list = []
    for tid in list(job.tasks):
        out += core.handle(ev.StatusUpdate(update(tid, "TASK_LOST", "", "REASON_INVALID_OFFERS")), 2)
    assert job.state is S.WAITING and "Revive" in kinds(out)


@pytest.mark.parametrize("state, reason", [
    pytest.param("TASK_LOST", "REASON_AGENT_REMOVED", id="lost-agent-removed"),
    pytest.param("TASK_DROPPED", "REASON_AGENT_DISCONNECTED", id="dropped-agent-disconnected"),
    pytest.param("TASK_FAILED", "REASON_INVALID_OFFERS", id="failed-is-never-a-refused-launch"),
])
def test_other_lost_or_dropped_launches_still_use_a_restart(core, state, reason) -> None:
    tids = launched(core, max_restarts=1)
    core.handle(ev.StatusUpdate(update(tids[0], state, "a1", reason)), 2)
    job = core.jobs["j1"]
    assert job.state is S.BACKOFF and job.restarts == 1


def test_a_user_kill_while_relaunching_stops_the_job(core) -> None:
    launched(core, DOWNPOUR, agents=("a1", "a2", "a3"), max_restarts=0)
    job = core.jobs["j1"]
    refused = [t.task_id for t in job.tasks.values() if t.agent_id == "a1"]
    core.handle(ev.StatusUpdate(update(refused[0], "TASK_LOST", "", "REASON_INVALID_OFFERS")), 2)
    assert job.state is S.RELAUNCHING
    core.handle(ev.KillJob("j1"), 3)
    assert job.state is S.KILLING
    for t in list(job.tasks.values()):
        out = core.handle(ev.StatusUpdate(update(t.task_id, "TASK_KILLED", t.agent_id)), 4)
    assert job.state is S.KILLED and "JobEnded" in kinds(out)


LAPTOP = (AgentView("a1", "laptop", ResourceVector(2, 16000)),)


def _never_fits(one_machine: bool, cluster=LAPTOP, **kw) -> str:
    core = FrameworkCore(CoreConfig(one_machine=one_machine))
    core.handle(ev.Registered("fw"), 0)
    submit_and_prepare(core, spec(DOWNPOUR, **kw), cluster=cluster)  # 6 processes of 1 cpu
    job = core.jobs["j1"]
    assert job.state is S.FAILED and "can never fit this cluster" in job.failure
    return job.failure


def test_on_the_embedded_agent_a_gang_short_of_cpus_is_told_the_flags_that_run_it_anyway() -> None:
    failure = _never_fits(one_machine=True)
    assert "this machine's embedded agent has 2 cpus and the job's 6 processes ask for 6 (memory fits)" in failure
    assert "--cpus 0.33" in failure and '--agent-resources "cpus:6"' in failure
    # each suggestion is one the job's policy places
    s = spec(DOWNPOUR, cpus=0.33)
    plan = plan_job(parse_job_text(s.conf_text, s.conf_path), s.plan_options)
    assert isinstance(place(plan, LAPTOP, load_policy("spread")), Placed)
    bigger = (AgentView("a1", "laptop", ResourceVector(6, 16000)),)
    plan = plan_job(parse_job_text(spec(DOWNPOUR).conf_text, spec(DOWNPOUR).conf_path), spec(DOWNPOUR).plan_options)
    assert isinstance(place(plan, bigger, load_policy("spread")), Placed)


@pytest.mark.parametrize("one_machine, cluster, kw", [
    pytest.param(False, LAPTOP, {}, id="a-real-cluster-gets-no-embedded-advice"),
    pytest.param(True, (AgentView("a1", "laptop", ResourceVector(2, 400)),), {}, id="memory-short-too"),
    pytest.param(True, (AgentView("a1", "n1", ResourceVector(2, 16000)), AgentView("a2", "n2", ResourceVector(2, 16000))),
                 {}, id="more-than-one-agent"),
])
def test_no_run_anyway_hint_when_sharing_cpus_would_not_help(one_machine, cluster, kw) -> None:
    assert "to run it here anyway" not in _never_fits(one_machine, cluster, **kw)


@pytest.mark.parametrize("state", ["TASK_LOST", "TASK_UNKNOWN"])
def test_a_launch_the_master_never_heard_of_is_placed_again_without_a_restart(core, state) -> None:
    """Re-subscribed, the framework reconciles its STAGING tasks; "unknown" means their ACCEPT never arrived."""
    tids = launched(core, DOWNPOUR, agents=("a1", "a2", "a3"), max_restarts=0)
    job = core.jobs["j1"]
    core.handle(ev.Registered("fw"), 2)
    for tid in tids:
        core.handle(ev.StatusUpdate(update(tid, state, job.tasks[tid].agent_id, "REASON_RECONCILIATION",
                                           "Reconciliation: Task is unknown")), 3)
    assert job.state is S.WAITING and job.restarts == 0 and job.failure == ""


def test_a_running_task_the_master_does_not_know_is_still_a_failure(core) -> None:
    tids = launched(core, max_restarts=1)
    core.handle(ev.StatusUpdate(update(tids[0], "TASK_RUNNING", "a1")), 2)
    core.handle(ev.StatusUpdate(update(tids[0], "TASK_LOST", "a1", "REASON_RECONCILIATION",
                                       "Reconciliation: Task is unknown")), 3)
    assert core.jobs["j1"].restarts == 1


def test_a_failed_accept_declines_its_offers_kills_its_tasks_and_places_the_gang_again(core) -> None:
    submit_and_prepare(core, spec(DOWNPOUR, max_restarts=0))
    out = core.handle(ev.OffersReceived(tuple(offer(a, cpus=8) for a in ("a1", "a2", "a3"))), 1)
    accepts = of(out, ev.Accept)
    failed, sent = accepts[0], accepts[1:]
    job = core.jobs["j1"]
    mine = tuple(t["task_id"]["value"] for t in failed.tasks)
    out = core.handle(ev.AcceptFailed(failed.offer_ids, mine, "RuntimeError: Not connected yet"), 2)
    assert ev.Decline(failed.offer_ids, 1.0) in out
    others = sorted(t["task_id"]["value"] for a in sent for t in a.tasks)
    assert sorted(k.task_id for k in of(out, ev.KillTask)) == sorted(mine + tuple(others))
    assert job.state is S.RELAUNCHING
    for tid in others:
        core.handle(ev.StatusUpdate(update(tid, "TASK_KILLED", job.tasks[tid].agent_id)), 3)
    assert job.state is S.WAITING and job.restarts == 0
    assert "the ACCEPT launching it failed: RuntimeError: Not connected yet" in job.history[-2][2]
