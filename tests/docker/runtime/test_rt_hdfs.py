"""Checkpoints in real HDFS (the scylla-hdfs image) through WebHDFS, and a resume from them."""

from __future__ import annotations

import shutil

import docker.errors
import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.swarm.overlays import create_job_network, remove_containers, remove_job_network
from .rt_docker import IMAGE, ensure_image, example_conf, labels, new_job_id, reports, shared_dir

HDFS_IMAGE = "scylla-hdfs:latest"


@pytest.fixture()
def hdfs_job(docker_client, swarm_manager):
    """A job overlay with a healthy HDFS (NameNode + DataNode) on it; yields (job id, network, hdfs host)."""
    ensure_image(docker_client)
    try:
        docker_client.images.get(HDFS_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{HDFS_IMAGE} is not built; run `make images`", pytrace=False)
    job = new_job_id("hdfs")
    net = create_job_network(docker_client, job)
    made = []
    try:
        host = f"{job}-hdfs"
        hdfs = docker_client.containers.run(HDFS_IMAGE, name=host, hostname=host, network=net.name,
                                            labels=labels(job), detach=True)
        made.append(hdfs)
        def healthy() -> bool:
            hdfs.reload()
            assert hdfs.status == "running", hdfs.logs()[-2000:]
            return hdfs.attrs["State"].get("Health", {}).get("Status") == "healthy"
        wait_until(healthy, 120, "HDFS to be healthy", interval_s=0.5, explain=lambda: hdfs.logs()[-2000:].decode())
        yield job, net, host, made
    finally:
        remove_containers(made)
        remove_job_network(docker_client, job)


def _train(docker_client, job, net, host, made, conf_dir, extra=()) -> tuple[int, str, str]:
    c = docker_client.containers.create(
        IMAGE, ["singa", "-conf", "/conf/job.conf", "-workspace", f"hdfs://{host}:8020/jobs/{job}", *extra],
        network=net.name, labels=labels(job), environment={"SCYLLA_WEBHDFS_URL": f"http://{host}:9870"},
        volumes={str(conf_dir): {"bind": "/conf", "mode": "ro"}})
    made.append(c)
    c.start()
    code = c.wait(timeout=120)["StatusCode"]
    return code, c.logs(stderr=False).decode(), c.logs(stdout=False).decode()


def test_checkpoints_go_to_hdfs_and_training_resumes_from_them(docker_client, hdfs_job) -> None:
    job, net, host, made = hdfs_job
    conf_dir = shared_dir("hdfsconf")
    try:
        (conf_dir / "job.conf").write_text(example_conf("digits-mlp"))
        code, out, err = _train(docker_client, job, net, host, made, conf_dir)
        assert code == 0, err
        assert f"workspace http://{host}:9870/webhdfs/v1/jobs/{job}/checkpoint" in err
        assert "not written" not in err and "cannot write" not in err
        (conf_dir / "job.conf").write_text(example_conf("digits-mlp", train_steps=800))
        code, out, err = _train(docker_client, job, net, host, made, conf_dir, extra=("-resume",))
        assert code == 0, err
        assert "training from step 600" in err
        assert [p["step"] for p in reports(out, "PROGRESS") if p["phase"] == "train"] == [650, 700, 750, 800]
        assert reports(out, "FINAL")[0]["test_accuracy"] >= 0.9
    finally:
        shutil.rmtree(conf_dir, ignore_errors=True)
