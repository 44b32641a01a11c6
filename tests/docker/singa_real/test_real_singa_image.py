"""The real Apache SINGA image: what it holds, one process training, and bad input refused (exit 2)."""

from __future__ import annotations

import re
from pathlib import Path

import docker
import pytest

from real_singa import EXAMPLES, IMAGE, Gang, conf_with, reports, require_real_singa


@pytest.fixture(scope="module", autouse=True)
def real_image(docker_client: docker.DockerClient) -> None:
    require_real_singa(docker_client)


def test_the_image_holds_singa_its_tools_and_data_but_no_compilers(docker_client: docker.DockerClient) -> None:
    script = ("id -u; for c in singa singatool singa-local singa-rnnlm singa-task; do command -v $c; done; "
              "command -v g++ gcc make || echo no-compilers; ls /data/mnist /data/cifar10 /data/digits; "
              "singa | head -1; singa-local | head -1")
    out = docker_client.containers.run(IMAGE, ["sh", "-c", script], remove=True).decode()
    lines = out.splitlines()
    assert lines[0] == "1000"
    assert [Path(p).name for p in lines[1:6]] == ["singa", "singatool", "singa-local", "singa-rnnlm", "singa-task"]
    assert "no-compilers" in lines
    for name in ("train_data.bin", "test_data.bin", "image_mean.bin", "train.csv"):
        assert name in lines
    assert out.count("Args: -conf JOB_CONF") == 2   # both builds are SINGA 0.3.0's main
    size_mb = docker_client.images.get(IMAGE).attrs["Size"] / 1e6
    assert size_mb < 300, f"{IMAGE} is {size_mb:.0f} MB"


def test_one_process_trains_the_digits_mlp_without_zookeeper(docker_client: docker.DockerClient) -> None:
    gang = Gang(docker_client, (EXAMPLES / "digits-mlp" / "job.conf").read_text(), 1,
                env={"SCYLLA_PROGRESS_URL": "http://127.0.0.1:9/progress"})   # nobody listens: must not matter
    try:
        gang.start()
        assert gang.wait(120) == {0: 0}
        out, err = gang.logs(0), gang.logs(0, stderr=True)
        progress = reports(out, "PROGRESS")
        assert [p["step"] for p in progress if p["phase"] == "train"] == list(range(0, 600, 50))
        assert [p["step"] for p in progress if p["phase"] == "test"] == [0, 200, 400]
        (final,) = reports(out, "FINAL")
        assert final["steps"] == 600 and final["test_step"] == 400 and final["test_accuracy"] >= 0.9
        assert re.search(r"worker\.cc:\d+\] Train @ step 550  Loss = ", err)   # SINGA's own log, unchanged
        assert "posting progress to http://127.0.0.1:9/progress failed" in err
        assert sorted(p.name for p in (gang.workspace / "checkpoint").iterdir()) == \
            ["step0-worker0", "step200-worker0", "step400-worker0", "step600-worker0"]
    finally:
        gang.close()


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace("type: kSTanh", "type: kNoSuchLayer"),
     r'^singa-task: job.conf:\d+:\d+: Unknown enumeration value of "kNoSuchLayer" for field "type".$'),
    (lambda t: t.replace('"/data/digits/train.csv"', '"/data/nope.csv"'),
     r"^singa-task: job.conf:\d+:\d+: layer 'data': path '/data/nope.csv' does not exist in the container$"),
    (lambda t: conf_with(t, train_steps="{"), r"^singa-task: job.conf:\d+:\d+: "),
])
def test_a_bad_conf_exits_2_naming_the_place(docker_client: docker.DockerClient, edit, says: str) -> None:
    gang = Gang(docker_client, edit((EXAMPLES / "digits-mlp" / "job.conf").read_text()), 1)
    try:
        gang.start()
        assert gang.wait(60) == {0: 2}
        last = gang.logs(0, stderr=True).strip().splitlines()[-1]
        assert re.match(says, last), last
    finally:
        gang.close()


def test_a_distributed_job_without_zookeeper_is_refused(docker_client: docker.DockerClient) -> None:
    gang = Gang(docker_client, (EXAMPLES / "frameworks" / "hogwild.conf").read_text(), 3)
    try:
        gang.start(order=[1])
        assert gang.wait(60) == {1: 2}
        assert gang.logs(1, stderr=True).strip().endswith(
            "a job of 3 processes needs ZooKeeper: set SCYLLA_ZK_HOSTS (host:port[,host:port])")
    finally:
        gang.close()
