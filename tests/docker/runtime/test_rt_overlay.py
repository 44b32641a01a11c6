"""SINGA jobs as one container per process on the job's Swarm overlay, as the framework launches them."""

from __future__ import annotations

import shutil
import time

import pytest

from scylla_singa.common.waiting import wait_until
from .rt_docker import ContainerJob, ensure_image, example_conf, reports, shared_dir

FRAMEWORKS = {"sandblaster": 5, "allreduce": 3, "downpour": 6, "hogwild": 3}


@pytest.fixture(scope="module", autouse=True)
def image(docker_client, swarm_manager):
    ensure_image(docker_client)


@pytest.fixture()
def container_jobs(docker_client):
    made: list[ContainerJob] = []
    yield made
    for job in made:
        job.close()


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_each_classic_framework_trains_across_containers_to_90_percent(docker_client, container_jobs,
                                                                        name: str) -> None:
    job = ContainerJob(docker_client, example_conf(name), FRAMEWORKS[name])
    container_jobs.append(job)
    started = time.monotonic()
    job.start()
    codes = job.wait(120)
    assert codes == {k: 0 for k in range(FRAMEWORKS[name])}, {k: job.logs(k, stderr=True)[-1500:] for k in codes}
    final = reports(job.logs(0), "FINAL")
    assert len(final) == 1 and final[0]["steps"] == 600 and final[0]["test_accuracy"] >= 0.90, final
    assert final[0]["job"] == job.job
    assert "all %d processes up" % FRAMEWORKS[name] in job.logs(FRAMEWORKS[name] - 1, stderr=True)
    assert time.monotonic() - started < 60


def test_a_killed_peer_makes_the_others_exit_nonzero_within_the_timeout(docker_client, container_jobs) -> None:
    conf = example_conf("sandblaster", train_steps=1000000, disp_freq=20, checkpoint_freq=0)
    job = ContainerJob(docker_client, conf, 5, env={"SCYLLA_PEER_TIMEOUT": "5"})
    container_jobs.append(job)
    job.start()
    wait_until(lambda: any(p["step"] >= 100 for p in reports(job.logs(0), "PROGRESS")), 60, "step 100",
               interval_s=0.2, explain=lambda: job.logs(0, stderr=True))
    job.containers[3].kill()
    killed = time.monotonic()
    codes = job.wait(5 + 15, only=[0, 1, 2, 4])
    assert time.monotonic() - killed < 5 + 15
    for k, code in codes.items():
        assert code == 3, (k, code, job.logs(k, stderr=True)[-1000:])
        assert f"process 3 ({job.name(3)}:6723)" in job.logs(k, stderr=True)


def test_killed_after_a_checkpoint_and_resumed_ends_in_the_same_band(docker_client, container_jobs) -> None:
    workspace = shared_dir("ws")
    try:
        first = ContainerJob(docker_client, example_conf("allreduce", train_steps=1000000, checkpoint_freq=200), 3,
                             workspace=workspace)
        container_jobs.append(first)
        first.start()
        ckpt = workspace / "checkpoint"
        wait_until(lambda: list(ckpt.glob("step*.done")), 60, "a complete checkpoint", interval_s=0.05,
                   explain=lambda: first.logs(0, stderr=True))
        for c in first.containers.values():
            c.kill()
        first.close()
        done = max(int(p.name[4:-5]) for p in ckpt.glob("step*.done"))
        resumed = ContainerJob(docker_client, example_conf("allreduce", train_steps=done + 400), 3,
                               workspace=workspace)
        container_jobs.append(resumed)
        resumed.start(extra=("-resume",))
        codes = resumed.wait(120)
        assert codes == {0: 0, 1: 0, 2: 0}, resumed.logs(0, stderr=True)
        assert f"training from step {done}" in resumed.logs(0, stderr=True)
        train = [p["step"] for p in reports(resumed.logs(0), "PROGRESS") if p["phase"] == "train"]
        assert train[0] == done + 50 and train[-1] == done + 400
        final = reports(resumed.logs(0), "FINAL")[0]
        assert final["steps"] == done + 400 and final["test_accuracy"] >= 0.90
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
