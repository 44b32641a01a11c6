"""`scylla-singa run` on Apache SINGA 0.3.0 (singa:latest) end to end: the embedded master, real containers.

The image is singa:latest unless SCYLLA_SINGA_IMAGE names a development build of images/singa; it must say
`io.scylla.runtime=apache-singa` (the framework reads the label to give real SINGA its ZooKeeper).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import docker
import docker.errors
import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import RUNTIME_APACHE_SINGA, RUNTIME_LABEL, job_network_name, job_zookeeper_alias
from scylla_singa.framework.job_zookeeper import own_container_name
from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from tests.support.job_confs import EXAMPLES, REAL_SINGA_IMAGE, conf_with, downpour4
from tests.support.scylla_cli import ScyllaCli, last_json

IMAGE = REAL_SINGA_IMAGE
DIGITS = EXAMPLES / "digits-mlp" / "job.conf"


@pytest.fixture
def real(scylla: ScyllaCli, docker_client: docker.DockerClient) -> ScyllaCli:
    """The `scylla` wrapper, once the image is known to be Apache SINGA by its label."""
    try:
        labels = docker_client.images.get(IMAGE).labels or {}
    except docker.errors.ImageNotFound:
        pytest.fail(f"{IMAGE} is not built: `scylla-singa images build singa` (or set SCYLLA_SINGA_IMAGE)",
                    pytrace=False)
    if labels.get(RUNTIME_LABEL) != RUNTIME_APACHE_SINGA:
        pytest.fail(f"{IMAGE} does not say {RUNTIME_LABEL}={RUNTIME_APACHE_SINGA}: rebuild it from images/singa "
                    "(`scylla-singa images build singa`)", pytrace=False)
    return scylla


def master_for(cli: ScyllaCli, docker_client: docker.DockerClient, resources: str) -> EmbeddedMesos:
    """A master and agent that outlive `run`, so that `logs` can read the sandboxes afterwards."""
    mesos = EmbeddedMesos([AgentSpec(resources=resources)], docker_client=docker_client,
                          allowed_host_paths=[cli.home / "jobs"])
    cli.authenticate_with(mesos.framework_credential)   # a secure master, as every one is by default
    return mesos


def steps(progress: list[dict], phase: str, attempt: int | None = None) -> list[int]:
    return [p["step"] for p in progress if p["phase"] == phase
            and (attempt is None or (p["task"] or "").endswith(f".a{attempt}"))]


def test_real_singa_trains_the_example_and_reports_like_the_python_runtime(real: ScyllaCli, docker_client) -> None:
    with master_for(real, docker_client, "cpus:2;mem:2048") as mesos:
        r = real.run("run", "--json", "--image", IMAGE, "--master", mesos.master_address, str(DIGITS))
        assert r.returncode == 0, r.stderr[-3000:]
        out = last_json(r.stdout)
        assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90, out
        assert out["steps"] == 600 and out["restarts"] == 0 and out["procs"][0]["state"] == "TASK_FINISHED", out
        # SINGA tests at step 0 and every test_freq steps, not after the last one: the summary says which test.
        assert re.search(rf"{out['job']}: FINISHED after 600 steps, test accuracy 0\.9\d\d \(tested at step 400\)",
                         r.stderr), r.stderr[-2000:]
        job = out["job"]
        progress = real.store().progress(job)
        assert steps(progress, "train") == list(range(0, 600, 50))    # every display of SINGA's log reached us
        assert steps(progress, "test") == [0, 200, 400]
        status = json.loads(real.run("status", "--json", job).stdout)
        assert status["state"] == "FINISHED" and status["test_accuracy"] == out["test_accuracy"], status
        assert status["last_progress"]["step"] in (400, 550), status
        stdout = real.run("logs", job)
        assert stdout.returncode == 0 and '"test_step": 400' in stdout.stdout, stdout.stdout[-2000:] + stdout.stderr
        stderr = real.run("logs", "--stderr", job).stdout      # SINGA's own glog, relayed unchanged
        assert "Train @ step 550" in stderr and "singa-task: finished" in stderr, stderr[-2000:]
    real.assert_nothing_left(job)


def test_four_real_singa_processes_meet_in_their_own_zookeeper_and_a_killed_one_resumes_from_a_checkpoint(
        real: ScyllaCli, docker_client: docker.DockerClient, tmp_path: Path) -> None:
    conf = tmp_path / "downpour4.conf"
    conf.write_text(downpour4(train_steps=1600, checkpoint_freq=200, test_freq=400))
    mesos = master_for(real, docker_client, "cpus:8;mem:8192").start()
    p = real.start("run", "--json", "--image", IMAGE, "--master", mesos.master_address, str(conf))
    try:
        job = real.new_job()
        # The job's ZooKeeper: a container of its own, on the job's overlay only, under the name <job>-zk.
        zk = wait_until(lambda: docker_client.containers.list(filters={"name": f"^{own_container_name(job)}$"}), 60,
                        "the job's ZooKeeper container")[0]
        networks = zk.attrs["NetworkSettings"]["Networks"]
        assert list(networks) == [job_network_name(job)], networks
        assert job_zookeeper_alias(job) in networks[job_network_name(job)]["Aliases"]
        checkpoints = real.home / "jobs" / job / "workspace" / "checkpoint"
        # Once step 400 is being written, step 200 is complete (both workers of group 0 wrote it).
        wait_until(lambda: (checkpoints / "step400-worker0").exists(), 240, "SINGA's step-400 checkpoint")
        victim = wait_until(lambda: [c for c in real.containers(job, running=True)
                                     if c.attrs["Config"]["Env"] and "SCYLLA_PROC_ID=3" in c.attrs["Config"]["Env"]],
                            60, "process 3's container")[0]
        victim.kill()   # a server process dies
        result = real.finish(p, timeout=600)
        assert result["state"] == "FINISHED" and result["restarts"] == 1 and result["test_accuracy"] >= 0.90, result
        assert sorted(x["id"] for x in result["procs"]) == [0, 1, 2, 3]
        # Attempt 2's process 0 resumed from a complete SINGA checkpoint, and its training went on from there.
        err0 = real.run("logs", "--proc", "0", "--stderr", job).stdout
        resumed = re.search(r"-resume: from step (\d+) \(step\d+-worker0, step\d+-worker1\)", err0)
        assert resumed and int(resumed.group(1)) >= 200, err0[-3000:]
        step = int(resumed.group(1))
        assert f"Load from checkpoint file /workspace/resume/attempt-2/step{step}-worker0" in err0
        train = steps(real.store().progress(job, limit=100000), "train", attempt=2)
        assert train and min(train) == step and max(train) == 1550, train
        # The ZooKeeper went with the job.
        real.assert_nothing_left(job)
        assert not docker_client.containers.list(all=True, filters={"name": f"^{own_container_name(job)}$"})
    finally:
        mesos.stop()


def test_a_shared_workspace_lets_a_job_start_from_another_jobs_checkpoint(real: ScyllaCli) -> None:
    shared = real.home / "jobs" / "shared-ws"
    base = DIGITS.read_text()
    first, second = real.tmp / "first.conf", real.tmp / "second.conf"
    real.tmp.mkdir(parents=True, exist_ok=True)
    first.write_text(conf_with(base, train_steps=200, test_freq=0, checkpoint_freq=200)
                     .replace('workspace: "/workspace/digits-mlp"', 'workspace: "/workspace/first"'))
    second.write_text(conf_with(base, train_steps=50, test_freq=50,
                                checkpoint_path='"/workspace/first/checkpoint/step200-worker0"')
                      .replace('workspace: "/workspace/digits-mlp"', 'workspace: "/workspace/second"'))
    for conf in (first, second):
        r = real.run("run", "--json", "--image", IMAGE, "--workspace", str(shared), str(conf))
        assert r.returncode == 0, r.stderr[-3000:]
    out = last_json(r.stdout)
    # SINGA's step-0 test of the second job already scores the first job's trained parameters.
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90, out
    assert (shared / "first" / "checkpoint" / "step200-worker0").is_file()
    assert (shared / "second" / "checkpoint" / "step50-worker0").is_file()
    real.assert_nothing_left(out["job"])


def test_a_conf_real_singa_cannot_run_fails_at_once_naming_the_file(real: ScyllaCli, tmp_path: Path) -> None:
    conf = tmp_path / "missing-data.conf"
    conf.write_text(DIGITS.read_text().replace("/data/digits/train.csv", "/data/digits/nowhere.csv"))
    r = real.run("run", "--json", "--image", IMAGE, str(conf))
    assert r.returncode == 1, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FAILED" and out["restarts"] == 0, out    # a bad conf is not retried
    assert "not restarted" in r.stderr and "nowhere.csv" in r.stderr, r.stderr[-3000:]
    real.assert_nothing_left(out["job"])


def test_hdfs_delivery_of_real_singa_is_refused_before_anything_starts(real: ScyllaCli) -> None:
    r = real.run("run", "--image", IMAGE, "--deliver", "hdfs", "--hdfs", "http://127.0.0.1:9", str(DIGITS))
    assert r.returncode == 2, r.stderr
    assert "Apache SINGA 0.3.0" in r.stderr and "--deliver volume" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and not real.job_ids()
