"""The singa-py:latest image (the Python runtime): what it holds, what it lacks, and one process training in it."""

from __future__ import annotations

import shutil
import time

import pytest

from .rt_docker import EXAMPLES, IMAGE, ensure_image, new_job_id, reports, run_to_completion, shared_dir


@pytest.fixture(scope="module", autouse=True)
def image(docker_client):
    ensure_image(docker_client)


def test_image_runs_as_a_non_root_user_with_singa_on_path(docker_client) -> None:
    img = docker_client.images.get(IMAGE)
    assert img.attrs["Config"]["User"] not in ("", "root", "0", "0:0")
    assert img.attrs["Config"]["WorkingDir"] == "/mnt/mesos/sandbox"
    script = ("set -e; id -u; command -v singa; "
              "touch /workspace/w && rm /workspace/w; touch /mnt/mesos/sandbox/s && rm /mnt/mesos/sandbox/s; "
              "ls /data/digits; "
              "for tool in gcc cc g++ pip pip3; do command -v $tool && echo HAS-$tool || true; done; "
              "python3 -c 'import importlib.util as u; print([m for m in (\"docker\", \"pymesos\", \"sklearn\", "
              "\"networkx\", \"click\") if u.find_spec(m)])'; "
              "python3 -c 'import numpy, zmq, google.protobuf; print(\"deps-ok\")'; "
              "echo threads=$OPENBLAS_NUM_THREADS")
    code, out, err = run_to_completion(docker_client, ["sh", "-c", script], new_job_id("img"))
    assert code == 0, err
    lines = out.split()
    assert lines[0] != "0" and "/usr/local/bin/singa" in lines
    for name in ("train.csv", "test.csv", "train.bin", "test.bin", "meta.json"):
        assert name in lines
    assert "HAS-" not in out and "[]" in out and "deps-ok" in out and "threads=1" in out


def test_one_process_in_the_container_reaches_90_percent_in_under_a_minute(docker_client) -> None:
    started = time.monotonic()
    code, out, err = run_to_completion(
        docker_client, ["singa", "-conf", "/examples/digits-mlp/job.conf"], new_job_id("one"),
        volumes={str(EXAMPLES): {"bind": "/examples", "mode": "ro"}}, timeout_s=60)
    elapsed = time.monotonic() - started
    assert code == 0, err
    final = reports(out, "FINAL")
    assert len(final) == 1 and final[0]["test_accuracy"] >= 0.90 and final[0]["steps"] == 600
    assert elapsed < 60
    assert len([p for p in reports(out, "PROGRESS") if p["phase"] == "train"]) == 12


def test_an_unsupported_layer_fails_at_start_with_exit_2(docker_client) -> None:
    sandbox = shared_dir("bad")
    try:
        text = (EXAMPLES / "digits-mlp" / "job.conf").read_text().replace("type: kSTanh", "type: kLRN")
        (sandbox / "job.conf").write_text(text)
        code, out, err = run_to_completion(docker_client, ["singa", "-conf", "/s/job.conf"], new_job_id("bad"),
                                           volumes={str(sandbox): {"bind": "/s", "mode": "ro"}})
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
    assert code == 2
    assert 'layer "tanh1": type kLRN is not supported' in err and "/s/job.conf:" in err
    assert out == ""
