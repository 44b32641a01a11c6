"""Faults during a job on the session's cluster (ours and Apache Mesos); each job must still FINISH above 0.90.

(a) a host's Docker engine dies with its containers. Our agent reports its
    tasks lost and offers nothing until the engine is back; an Apache Mesos
    agent reports the task failed (`docker run` exits 125) and goes on
    offering the host, where every launch fails: the framework sets that
    agent aside (framework/agent_backoff.py). Either way the gang restarts
    on the other hosts from the newest checkpoint.
(b) a host is cut off (its veth down): the master marks its agent
    unreachable after the ping timeout (10 s here), same recovery; when the
    link returns the agent is refused (ours) or told to shut the tasks of
    the (not partition-aware) framework down (Apache Mesos), and the stale
    container dies.
(c) the framework process is killed: the tasks go on, `resume` reconciles.
(e) the HDFS NameNode restarts: checkpoints fail for a while, training goes
    on (on our cluster: the HDFS path is the same on both).
(d), the leading master killed, is in test_failover.py.

Each undoes its fault in `finally` (engine restarted, link up, ...) and
`healthy_cluster` checks the cluster is whole again for the next test. No
checkpoint may be corrupted: every file under its final name must load
with finite values. Recovery times are recorded (docs/faults.md).
"""

from __future__ import annotations

import time

import docker
import hdfs
import pytest
import requests
from hdfs.util import HdfsError

from scylla_singa.cluster import faults
from scylla_singa.cluster.state import ClusterInfo, State
from scylla_singa.common.waiting import wait_until
from tests.support.scylla_cli import ScyllaCli
from .cluster_helpers import (first, job_conf, job_times, master_state, record_recovery, training_report,
                              verify_checkpoints, volume_checkpoints)

pytestmark = pytest.mark.disruptive


def _host_of(cli: ScyllaCli, job: str, proc: int) -> str:
    return next(t.hostname for t in cli.store().load(job).tasks.values() if t.proc == proc)


def _training(cli: ScyllaCli, job: str, since: float) -> set[int]:
    """The processes that reported training progress since `since`."""
    return {p["proc"] for p in cli.store().progress(job, limit=100000) if p["at"] >= since and p["phase"] == "train"}


def _resumed_from_a_checkpoint(cli: ScyllaCli, job: str, since: float) -> int:
    """The first step the restarted gang reported: past 0, so it went on from a checkpoint."""
    steps = [p["step"] for p in cli.store().progress(job, limit=100000) if p["at"] >= since and p["phase"] == "train"]
    assert steps, "no progress from the restarted gang"
    return min(steps)


def test_a_dead_docker_engine_restarts_the_gang_on_the_other_hosts(
        cli: ScyllaCli, cluster: ClusterInfo, healthy_cluster: State, tmp_path, request) -> None:
    state = healthy_cluster
    p = cli.start("run", "--json", "--master", cluster.zk, str(job_conf(tmp_path, 12000)))
    job = cli.new_job()
    wait_until(lambda: volume_checkpoints(cli, job), 120, "a complete checkpoint")
    victim = _host_of(cli, job, 0)  # process 0 writes the checkpoints: it resumes elsewhere

    def agent() -> dict:
        return next(a for a in master_state(state)["slaves"] if a["hostname"] == victim)
    killed_at = time.time()
    faults.kill_engine(state, victim)
    try:
        if cluster.mesos == "ours":  # our agent knows its engine is gone; Apache Mesos's goes on offering it
            wait_until(lambda: agent()["deactivated"], 30, f"{victim}'s agent to stop offering")
        record = wait_until(lambda: (r := cli.store().load(job)).attempt >= 2 and r.state.value == "RUNNING" and r,
                            120, "the gang running again")
        assert victim not in {t.hostname for t in record.tasks.values()}
        why = "REASON_EXECUTOR_TERMINATED" if cluster.mesos == "ours" else "Container exited with status 125"
        assert why in record.restart_reasons[0] and victim in record.restart_reasons[0], record.restart_reasons
        running = first(job_times(cli.store(), job), "RUNNING", killed_at)
        wait_until(lambda: len(_training(cli, job, running)) == 3, 120, "every process training again",
                   explain=training_report(cli, job, running, skip=frozenset({victim})))
        training = time.time() - killed_at
    finally:
        faults.restart_engine(state, victim)
    wait_until(lambda: not agent()["deactivated"], 30, f"{victim}'s agent to offer again")
    out = cli.finish(p)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 1, out
    history = job_times(cli.store(), job)
    restarting, running = first(history, "RESTARTING", killed_at), first(history, "RUNNING", killed_at)
    assert _resumed_from_a_checkpoint(cli, job, running) > 200
    assert volume_checkpoints(cli, job)[-1] == 12000
    if cluster.mesos == "apache":
        _remove_the_dead_engines_exited_container(cli, job, victim)
    cli.assert_nothing_left(job)  # the dead engine's container too, once the engine was back
    record_recovery(request, cluster.mesos, "(a) Docker engine killed", "tasks lost, gang restarting",
                    restarting - killed_at)
    record_recovery(request, cluster.mesos, "(a) Docker engine killed", "gang running again on the other hosts",
                    running - killed_at)
    record_recovery(request, cluster.mesos, "(a) Docker engine killed", "every process training again", training)


def _remove_the_dead_engines_exited_container(cli: ScyllaCli, job: str, victim: str) -> None:
    """An Apache Mesos agent removes an exited task container `--docker_remove_delay` after the task
    ended (10 s in the cluster-in-a-box), and does not try again when the engine was still down then:
    the dead engine's container stays, exited, once the engine is back. Nothing of it may still run."""
    engine = cli.engine(victim)
    for c in engine.containers.list(ignore_removed=True, all=True, filters={"label": f"scylla.job={job}"}):
        assert c.status != "running", f"{c.name} on {victim} runs again after its engine's restart"
        c.remove(force=True)


def test_a_cut_off_host_is_unreachable_and_its_stale_containers_die_when_it_returns(
        cli: ScyllaCli, cluster: ClusterInfo, healthy_cluster: State, tmp_path, request) -> None:
    state = healthy_cluster
    p = cli.start("run", "--json", "--master", cluster.zk, str(job_conf(tmp_path, 20000)))
    job = cli.new_job()
    wait_until(lambda: volume_checkpoints(cli, job), 120, "a complete checkpoint")
    # Not process 0's host: cut off, it could still write checkpoints into the volume all hosts
    # of this one machine share (a real partition would need fencing of the shared store).
    victim = _host_of(cli, job, 1)
    engine = cli.engine(victim)
    stale = {c.id for c in engine.containers.list(ignore_removed=True, filters={"label": f"scylla.job={job}"})}
    assert len(stale) == 1
    cut_at = time.time()
    faults.cut_off(state, victim)
    try:
        record = wait_until(lambda: (r := cli.store().load(job)).attempt >= 2 and r.state.value == "RUNNING" and r,
                            120, "the gang running again")
        # Apache Mesos: TASK_LOST, REASON_AGENT_REMOVED, "health check timed out" (the framework is not
        # partition-aware); ours says the agent is unreachable.
        why = "unreachable" if cluster.mesos == "ours" else "REASON_AGENT_REMOVED"
        assert why in record.restart_reasons[0] and victim in record.restart_reasons[0], record.restart_reasons
        assert victim not in {a["hostname"] for a in master_state(state)["slaves"]}
        assert {c.id for c in engine.containers.list(ignore_removed=True,
                                                      filters={"label": f"scylla.job={job}"})} == stale
        # The link returns once the new gang trains. (Returning while it starts, it brings the stale
        # container's DNS record back to the overlay until the agent kills it; a process that resolved
        # its peer to that address then waits out a TCP connect timeout, over a minute: see
        # docs/faults.md.)
        running = first(job_times(cli.store(), job), "RUNNING", cut_at)
        wait_until(lambda: len(_training(cli, job, running)) == 3, 120, "every process training again",
                   explain=training_report(cli, job, running, skip=frozenset({victim})))
        training = time.time() - cut_at
    finally:
        faults.reconnect(state, victim)
    back_at = time.monotonic()
    wait_until(lambda: not engine.containers.list(ignore_removed=True, filters={"label": f"scylla.job={job}"}), 60,
               f"the stale container on {victim} to be killed")
    stale_gone = time.monotonic() - back_at
    # ... and removed (Apache Mesos: `--docker_remove_delay` after it exited, 10 s here).
    wait_until(lambda: not engine.containers.list(ignore_removed=True, all=True,
                                                  filters={"label": f"scylla.job={job}"}), 60,
               f"the stale container on {victim} to be removed")
    out = cli.finish(p)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 1, out
    history = job_times(cli.store(), job)
    restarting, running = first(history, "RESTARTING", cut_at), first(history, "RUNNING", cut_at)
    assert _resumed_from_a_checkpoint(cli, job, running) > 200
    assert volume_checkpoints(cli, job)[-1] == 20000  # none corrupted, and the last one is the end
    cli.assert_nothing_left(job)
    record_recovery(request, cluster.mesos, "(b) host cut off (veth down)", "agent unreachable, gang restarting",
                    restarting - cut_at)
    record_recovery(request, cluster.mesos, "(b) host cut off (veth down)", "gang running again on the other hosts",
                    running - cut_at)
    record_recovery(request, cluster.mesos, "(b) host cut off (veth down)", "every process training again",
                    training)
    record_recovery(request, cluster.mesos, "(b) host cut off (veth down)",
                    "stale container killed after the link returns", stale_gone)


def test_a_killed_framework_is_resumed_and_its_tasks_go_on(
        cli: ScyllaCli, cluster: ClusterInfo, healthy_cluster: State, tmp_path, request) -> None:
    p = cli.start("run", "--json", "--master", cluster.zk, str(job_conf(tmp_path, 12000)))
    job = cli.new_job()
    wait_until(lambda: cli.store().progress(job), 120, "training progress")
    before = {c.id for c in cli.containers(job, running=True)}
    p.kill()
    p.wait(30)
    killed = time.monotonic()
    assert {c.id for c in cli.containers(job, running=True)} == before  # tasks go on
    again = cli.start("resume", "--json", "--master", cluster.zk, job)
    wait_until(lambda: "resumed framework" in cli.output(again)[1], 60, "the framework to re-subscribe")
    resubscribed = time.monotonic() - killed
    out = cli.finish(again)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 0, out
    assert cli.store().load(job).attempt == 1  # nothing was launched twice
    assert volume_checkpoints(cli, job)[-1] == 12000  # none corrupted, and the last one is the end
    cli.assert_nothing_left(job)
    record_recovery(request, cluster.mesos, "(c) framework process killed", "resumed framework re-subscribed",
                    resubscribed)


@pytest.mark.mesos("ours")
def test_a_restarted_namenode_interrupts_checkpoints_not_training(
        cli: ScyllaCli, cluster: ClusterInfo, healthy_cluster: State, host_engine: docker.DockerClient,
        tmp_path, request) -> None:
    state = healthy_cluster
    client = hdfs.InsecureClient(cluster.webhdfs, user="test", timeout=30)

    def names(job: str) -> list[str]:
        try:
            return client.list(f"/scylla/{job}/workspace/checkpoint")
        except (HdfsError, requests.RequestException):
            return []

    def complete(job: str) -> set[str]:
        return {n for n in names(job) if n.endswith(".done")}

    # 60,000 steps: about 100 s here, so the job outlives the restart (12 s here) with a wide margin.
    p = cli.start("run", "--json", "--master", cluster.zk, "--deliver", "hdfs", "--hdfs", cluster.webhdfs,
                  str(job_conf(tmp_path, 60000, 1000)))
    job = cli.new_job()
    wait_until(lambda: complete(job), 120, "a complete checkpoint in HDFS")
    had = complete(job)
    restarted = time.monotonic()
    faults.restart_service(state, host_engine, "hdfs")
    healthy = time.monotonic() - restarted
    wait_until(lambda: complete(job) - had or p.poll() is not None, 120, "a checkpoint after the restart")
    if not complete(job) - had:
        out, err = cli.output(p)
        steps = max((s["step"] for s in cli.store().progress(job, limit=100000)), default=None)
        pytest.fail(f"the job ended (exit {p.returncode}, last step {steps}, HDFS healthy after {healthy:.1f} s) "
                    f"before it wrote a checkpoint after the restart; checkpoints: {names(job)}; "
                    f"stdout: {out[-1500:]}\nstderr: {err[-3000:]}")
    next_checkpoint = time.monotonic() - restarted
    out = cli.finish(p)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 0, out
    where = f"/scylla/{job}/workspace/checkpoint"

    def read(name: str) -> bytes:
        with client.read(f"{where}/{name}") as r:
            return r.read()
    assert verify_checkpoints(names(job), read)
    cli.assert_nothing_left(job)
    record_recovery(request, cluster.mesos, "(e) HDFS NameNode restarted", "HDFS healthy again", healthy)
    record_recovery(request, cluster.mesos, "(e) HDFS NameNode restarted", "next complete checkpoint written",
                    next_checkpoint)
