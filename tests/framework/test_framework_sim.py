"""Gangs, failures and restarts through pymesos's real driver and the embedded master."""

from __future__ import annotations

from scylla_singa.common.waiting import wait_until
from scylla_singa.framework.model import JobState
from .harness import make_spec

DOWNPOUR = "examples/frameworks/downpour.conf"  # 6 processes of 1 cpu
GPU_CONF = "tests/unit/confs/v03-convnet.conf"   # gpu: 0 -> every process asks for 1 gpu


def test_single_process_job_finishes(cluster_factory) -> None:
    h = cluster_factory(["cpus:4;mem:4096"])
    job = h.run(make_spec("one-1"))
    assert job.state is JobState.FINISHED
    assert [t.state for t in job.tasks.values()] == ["TASK_FINISHED"]
    assert h.store.load("one-1").state is JobState.FINISHED


def test_gang_waits_until_offers_from_trickling_agents_fit_it_all(cluster_factory) -> None:
    h = cluster_factory(["cpus:2;mem:4096"] * 3)
    for i in (1, 2):
        h.mesos.stop_agent(i, kill=True)
    h.shell.submit(make_spec("gang-1", DOWNPOUR, command="sleep 30"))
    wait_until(lambda: "0/1 agents can host" in _reason(h, "gang-1"), 30, "the job to wait")
    assert h.shell.job("gang-1").tasks == {}
    h.mesos.start_agent(1)
    wait_until(lambda: "0/2 agents can host" in _reason(h, "gang-1"), 30, "two agents' offers")
    assert h.shell.job("gang-1").state is JobState.WAITING
    h.mesos.start_agent(2)
    job = wait_until(lambda: (j := h.shell.job("gang-1")).state is JobState.RUNNING and j, 30, "the gang to run")
    assert len(job.tasks) == 6 and len({t.agent_id for t in job.tasks.values()}) == 3
    h.shell.kill("gang-1")
    assert h.shell.ended["gang-1"].wait(20)
    assert h.shell.job("gang-1").state is JobState.KILLED


def _reason(h, job_id: str) -> str:
    job = h.shell.job(job_id)
    return job.waiting_reason if job else ""


def test_a_job_bigger_than_the_cluster_fails_fast(cluster_factory) -> None:
    h = cluster_factory(["cpus:1;mem:4096"])
    job = h.run(make_spec("big-1"), timeout=10)  # needs 2 cpus in one process
    assert job.state is JobState.FAILED
    assert "can never fit this cluster" in job.failure and "insufficient cpus" in job.failure


def test_failing_process_restarts_then_gives_up(cluster_factory) -> None:
    h = cluster_factory(["cpus:4;mem:4096"])
    job = h.run(make_spec("fail-1", command="exit 1{resume:.0}", max_restarts=2))
    assert job.state is JobState.FAILED and job.restarts == 2 and job.attempt == 3
    assert "exited with status 1" in job.failure and "no restarts left" in job.failure
    assert len(job.restart_reasons) == 2


def test_gpu_jobs_ask_for_gpus_and_land_on_gpu_agents(cluster_factory) -> None:
    h = cluster_factory(["cpus:8;mem:8192", "cpus:8;mem:8192;gpus:2"])
    job = h.run(make_spec("gpu-1", GPU_CONF))
    assert job.state is JobState.FINISHED
    assert {t.hostname for t in job.tasks.values()} == {"sim-1"}
    state = h.mesos.call(_state(h))
    fw = next(f for f in state["frameworks"] + state.get("completed_frameworks", []) if f["name"] == "scylla-singa")
    assert "GPU_RESOURCES" in fw["capabilities"]  # Mesos's /master/state lists capability names


async def _state(h):
    import aiohttp

    async with aiohttp.ClientSession(headers=h.mesos.framework_credential.headers()) as s:
        async with s.get(f"http://{h.mesos.master_address}/master/state") as r:
            return await r.json()


def test_two_jobs_run_at_once_from_one_framework(cluster_factory) -> None:
    h = cluster_factory(["cpus:2;mem:4096", "cpus:2;mem:4096"])
    h.shell.submit(make_spec("two-a", command="sleep 2"))
    h.shell.submit(make_spec("two-b", command="sleep 2"))
    wait_until(lambda: all(h.shell.job(j) and h.shell.job(j).state is JobState.RUNNING for j in ("two-a", "two-b")),
               30, "both jobs running at once")
    assert h.shell.ended["two-a"].wait(20) and h.shell.ended["two-b"].wait(20)
    assert {h.shell.job(j).state for j in ("two-a", "two-b")} == {JobState.FINISHED}


def test_malformed_events_from_the_driver_never_stop_the_framework(cluster_factory, caplog) -> None:
    """pymesos tears the framework down (killing every task) if a callback raises: ours never do."""
    h = cluster_factory(["cpus:4;mem:4096"])
    h.shell.resourceOffers(h.shell.driver, [{"not": "an offer"}])
    h.shell.statusUpdate(h.shell.driver, {"state": "TASK_RUNNING"})  # no task_id
    h.shell.offerRescinded(h.shell.driver, {})
    wait_until(lambda: sum("handling" in r.getMessage() or "queueing" in r.getMessage() for r in caplog.records) >= 3,
               30, "the three bad events to be logged")
    job = h.run(make_spec("after-bad-1"))  # the same framework still schedules and follows jobs
    assert job.state is JobState.FINISHED
