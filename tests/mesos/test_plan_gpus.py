"""`scylla-singa plan` refuses a GPU job on a cluster whose agents have no GPUs (simulated agents, no Docker)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scylla_singa.mesos.embedded import AgentSpec
from tests.support.job_confs import EXAMPLES, conf_with

CLI = [sys.executable, "-m", "scylla_singa"]


@pytest.fixture
def gpu_conf(tmp_path: Path) -> Path:
    path = tmp_path / "gpu.conf"
    path.write_text(conf_with((EXAMPLES / "digits-mlp" / "job.conf").read_text(), gpu=0))
    return path


def plan(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CLI + ["plan", *args], capture_output=True, text=True, timeout=60)


def test_a_gpu_job_is_refused_on_this_machine_at_its_gpu_line(gpu_conf: Path) -> None:
    r = plan(str(gpu_conf))      # no local cluster in this SCYLLA_HOME: `run` would start an embedded agent
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.startswith(f"{gpu_conf}:1:1: this is a GPU job: each process needs 1 GPU (`gpu:`), but this "
                               "machine (the embedded agent `run` would start) has no agent with GPUs"), r.stderr
    assert "CPU build" in r.stderr and "Traceback" not in r.stderr


def test_a_gpu_job_is_refused_on_a_cluster_without_gpus_and_planned_on_one_with_them(cluster, gpu_conf: Path) -> None:
    cpu_only = cluster([AgentSpec(resources="cpus:4;mem:4096")])
    r = plan("--master", cpu_only.master_address, str(gpu_conf))
    assert r.returncode == 2 and f"but the cluster at {cpu_only.master_address} has no agent with GPUs" in r.stderr, r
    with_gpus = cluster([AgentSpec(resources="cpus:4;mem:4096"), AgentSpec(resources="cpus:4;mem:4096;gpus:1")])
    r = plan("--master", with_gpus.master_address, "--json", str(gpu_conf))
    assert r.returncode == 0, r.stderr
    assert '"gpus": 1' in r.stdout


def test_a_cpu_job_is_planned_without_asking_any_cluster(tmp_path: Path) -> None:
    r = plan("--master", "127.0.0.1:9", str(EXAMPLES / "digits-mlp" / "job.conf"))   # nothing listens there
    assert r.returncode == 0, r.stderr
