"""The real Apache SINGA image: what it holds, one process training, and bad input refused (exit 2)."""

from __future__ import annotations

import re
import shutil
import time

import docker
import pytest

from .real_singa import EXAMPLES, IMAGE, SANDBOX, Gang, conf_with, labels, new_job_id, reports, require_real_singa, \
    shared_dir, wait_until
from scylla_singa.contracts import JOB_FILES_DIR
from scylla_singa.framework.model import DEFAULT_COMMAND


@pytest.fixture(scope="module", autouse=True)
def real_image(docker_client: docker.DockerClient) -> None:
    require_real_singa(docker_client)


def test_the_image_holds_singa_its_tools_and_data_but_no_compilers(docker_client: docker.DockerClient) -> None:
    script = ("id -u; for c in singa singatool singa-local singa-rnnlm singa-task; do command -v $c; done; "
              "command -v g++ gcc make || echo no-compilers; ls /data/mnist-shaped /data/cifar-shaped /data/digits; "
              "singa | head -1; singa-local | head -1; ls /data/rnnlm")
    out = docker_client.containers.run(IMAGE, ["sh", "-c", script], remove=True).decode()
    lines = out.splitlines()
    assert lines[0] == "1000"
    assert lines[1:6] == ["/usr/local/bin/" + n for n in ("singa", "singatool", "singa-local", "singa-rnnlm", "singa-task")]
    assert "no-compilers" in lines
    for name in ("digits-as-mnist-train.bin", "digits-as-cifar-test.bin", "digits-as-cifar-mean.bin", "train.csv",
                 "train_data.bin", "valid_data.bin"):
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


def test_the_frameworks_command_template_runs_real_singa(docker_client: docker.DockerClient) -> None:
    """The framework's command (`singa ... -procs_id K -cluster ... -workspace W`) reaches singa-task."""
    sandbox, workspace = shared_dir("cmd"), shared_dir("cmd-ws")
    (sandbox / "job.conf").write_text((EXAMPLES / "digits-mlp" / "job.conf").read_text())
    (sandbox / "cluster.json").write_text('{"job": "j", "nprocs": 1, "procs": [{"id": 0, "host": "j-proc-0", "port": 6723}]}')
    command = DEFAULT_COMMAND.format(proc=0, workspace="/workspace")
    # The job's files at JOB_FILES_DIR, read-only, where the framework mounts them (outside the sandbox).
    c = docker_client.containers.create(
        IMAGE, ["/bin/sh", "-c", command], labels=labels(new_job_id("cmd")), working_dir=SANDBOX,
        volumes={str(sandbox): {"bind": JOB_FILES_DIR, "mode": "ro"},
                 str(workspace): {"bind": "/workspace", "mode": "rw"}})
    try:
        c.start()
        wait_until(lambda: (c.reload(), c.status)[1] == "exited", 120, "the task to end")
        assert c.attrs["State"]["ExitCode"] == 0
        (final,) = reports(c.logs(stdout=True, stderr=False).decode(), "FINAL")
        assert final["test_accuracy"] >= 0.9
        assert "singa-task: running singa-local" in c.logs(stdout=False, stderr=True).decode()
    finally:
        c.remove(force=True)
        shutil.rmtree(sandbox, ignore_errors=True)
        shutil.rmtree(workspace, ignore_errors=True)


def test_singas_rnnlm_example_with_its_own_layers_learns_the_corpus(docker_client: docker.DockerClient) -> None:
    conf = conf_with((EXAMPLES / "singa" / "rnnlm" / "job.conf").read_text(), train_steps=1054)
    gang = Gang(docker_client, conf, 1, env={"SCYLLA_SINGA_LOCAL_BIN": "singa-rnnlm"})
    try:
        gang.start()
        assert gang.wait(180) == {0: 0}
        ppl = [p["metrics"]["perplexity"] for p in reports(gang.logs(0), "PROGRESS") if p["phase"] == "validate"]
        assert len(ppl) == 2 and ppl[0] > 10 and ppl[-1] < 4   # 13 words: from chance to the corpus's structure
    finally:
        gang.close()


def test_sigterm_stops_singa_at_once(docker_client: docker.DockerClient) -> None:
    """The kill policy's SIGTERM reaches SINGA through the wrapper (PID 1): no waiting out the grace period."""
    gang = Gang(docker_client, conf_with((EXAMPLES / "digits-mlp" / "job.conf").read_text(), train_steps=100000), 1)
    try:
        gang.start()
        wait_until(lambda: reports(gang.logs(0), "PROGRESS"), 60, "the first progress report")
        started = time.monotonic()
        gang.containers[0].stop(timeout=30)
        assert time.monotonic() - started < 10
        assert gang.status(0) == ("exited", 143)
        assert "singa-task: received signal 15; stopping SINGA" in gang.logs(0, stderr=True)
    finally:
        gang.close()


def test_singas_threads_share_its_queue_table_and_context_safely(docker_client: docker.DockerClient) -> None:
    """Patch 0003: one thread adds queues (Dealers) and devices while others send, receive and look theirs up.

    Unpatched SINGA 0.3.0 fails each part here within seconds (a lookup during a rehash: out_of_range or SIGSEGV),
    as a distributed worker process once crashed in CI when its stub opened a connection to another process while
    its workers sent."""
    container = docker_client.containers.run(IMAGE, ["/opt/singa/bin/singa-thread-check"], detach=True)
    try:
        code = container.wait(timeout=180)["StatusCode"]
        out = container.logs().decode()
        assert code == 0, f"singa-thread-check exited {code}:\n{out}"
        assert "message table: all messages received while 100000 queues were added" in out
        assert re.search(r"^context: 200000 threads set up while [1-9]\d* lookups ran$", out, re.M)
        assert out.splitlines()[-1] == "ok"
    finally:
        container.remove(force=True)
