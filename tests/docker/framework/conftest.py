"""End-to-end helpers: `scylla-singa run` as a subprocess, and what it leaves behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from scylla_singa.framework.store import JobStore

from tests.waiting import wait_for  # noqa: F401  (re-exported to the tests)

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "scylla_singa"]




class Scylla:
    """Runs the CLI with its own SCYLLA_HOME; reads its store; finds its Docker objects."""

    def __init__(self, home: Path, client: docker.DockerClient) -> None:
        self.home, self.client = home, client
        self.env = {**os.environ, "SCYLLA_HOME": str(home), "PYTHONUNBUFFERED": "1"}
        self.procs: list[subprocess.Popen] = []

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(CLI + list(args), cwd=REPO, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def start(self, *args: str) -> subprocess.Popen:
        p = subprocess.Popen(CLI + list(args), cwd=REPO, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def store(self) -> JobStore:
        return JobStore(self.home / "framework.sqlite")

    def job_ids(self) -> list[str]:
        return [j for j, *_ in self.store().jobs()]

    def containers(self, job_id: str | None = None) -> list:
        label = f"scylla.job={job_id}" if job_id else "scylla.job"
        return self.client.containers.list(ignore_removed=True, all=True, filters={"label": label})

    def networks(self, job_id: str) -> list:
        return self.client.networks.list(filters={"label": f"scylla.job={job_id}"})

    def cleanup(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(30)
        for job_id in self.job_ids():
            for c in self.containers(job_id):
                c.remove(force=True)
            for n in self.networks(job_id):
                try:
                    n.remove()
                except docker.errors.APIError:
                    pass


def last_json(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert lines, f"no JSON line in stdout: {stdout[-2000:]}"
    return json.loads(lines[-1])


@pytest.fixture
def scylla(tmp_path: Path, docker_client, swarm_manager) -> Iterator[Scylla]:
    s = Scylla(tmp_path / "home", docker_client)
    yield s
    s.cleanup()


def assert_nothing_left(s: Scylla, job_id: str) -> None:
    wait_for(lambda: not s.containers(job_id) and not s.networks(job_id), 60,
             f"{job_id}'s containers and network to be gone")
