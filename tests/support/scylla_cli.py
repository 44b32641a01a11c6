"""`scylla-singa` as a subprocess, the one wrapper every test that runs the command line uses.

A ScyllaCli runs the command with its own SCYLLA_HOME (so volume delivery
mounts from where the agents allow, and the framework store is its own),
reads that store, and finds the Docker objects of the jobs it submitted:
containers on the engines they may run on (the host's, or each node's of a
cluster-in-a-box) and networks on the host engine. `cleanup()` kills what it
started and removes those objects, also when a test failed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import docker
import docker.errors
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import JOB_LABEL
from scylla_singa.framework.store import JobStore

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "scylla_singa"]
PY_RUNTIME_IMAGE = "singa-py:latest"


def last_json(text: str) -> dict:
    """The last line of `text` that is a JSON object (what `run --json` prints last)."""
    lines = [line for line in text.splitlines() if line.startswith("{")]
    assert lines, f"no JSON line in the output: {text[-2000:]}"
    return json.loads(lines[-1])


class ScyllaCli:
    """`scylla-singa` with SCYLLA_HOME=`home`; its outputs go to files under `tmp`.

    `host` is the host engine (job networks); `engines` maps node names to
    the Docker hosts job containers may run on (default: the host engine).
    """

    def __init__(self, home: Path, host: docker.DockerClient, tmp: Path, engines: dict[str, str] | None = None) -> None:
        self.home, self.host, self.tmp = Path(home), host, Path(tmp)
        self.engines = engines
        # The framework tests run their jobs on the Python runtime (fast, small) unless a test names an image;
        # the Apache SINGA image has its own suites (tests/docker/singa_real, the real-SINGA e2e tests).
        self.env = {**os.environ, "SCYLLA_HOME": str(self.home), "PYTHONUNBUFFERED": "1",
                    "SCYLLA_IMAGE": os.environ.get("SCYLLA_IMAGE", PY_RUNTIME_IMAGE)}
        self.procs: list[subprocess.Popen] = []
        self.known = set(self.job_ids())
        self._started = 0

    def authenticate_with(self, credential) -> None:
        """Make every later command authenticate as `credential` (a mesos.api.credentials.Credential), the way a
        user does: a 0600 file named by SCYLLA_CREDENTIAL (never the secret on a command line)."""
        from scylla_singa.mesos.api.credentials import credential_json, write_private
        path = self.tmp / f"framework-{credential.principal}.credential"
        if path.exists():
            path.unlink()
        write_private(path, credential_json(credential))
        self.env["SCYLLA_CREDENTIAL"] = str(path)

    # ---- running it ----------------------------------------------------------
    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(CLI + list(args), cwd=REPO, env=self.env, capture_output=True, text=True,
                              timeout=timeout)

    def start(self, *args: str) -> subprocess.Popen:
        """Start in the background; stdout and stderr go to files (`output(p)` reads them)."""
        self._started += 1
        self.tmp.mkdir(parents=True, exist_ok=True)
        out, err = self.tmp / f"cli{self._started}.out", self.tmp / f"cli{self._started}.err"
        with open(out, "w") as out_file, open(err, "w") as err_file:
            p = subprocess.Popen(CLI + list(args), cwd=REPO, env=self.env, stdout=out_file, stderr=err_file, text=True)
        p.files = (out, err)  # type: ignore[attr-defined]
        self.procs.append(p)
        return p

    @staticmethod
    def output(p: subprocess.Popen) -> tuple[str, str]:
        """What a started command wrote so far: (stdout, stderr)."""
        return tuple(f.read_text() for f in p.files)  # type: ignore[attr-defined,return-value]

    def finish(self, p: subprocess.Popen, timeout: float = 300) -> dict:
        """Wait for a started `run --json`/`resume --json`; its JSON line (asserting exit 0)."""
        p.wait(timeout)
        out, err = self.output(p)
        assert p.returncode == 0, f"exit {p.returncode}: {err[-3000:]}"
        return last_json(out)

    # ---- what it did ---------------------------------------------------------
    def store(self) -> JobStore:
        return JobStore(self.home / "framework.sqlite")

    def job_ids(self) -> list[str]:
        path = self.home / "framework.sqlite"
        return [j for j, *_ in JobStore(path).jobs()] if path.exists() else []

    def new_job(self, timeout: float = 60) -> str:
        """The id of the first job submitted through this wrapper (waits for it)."""
        return wait_until(lambda: [j for j in self.job_ids() if j not in self.known], timeout,
                          "a job to be submitted")[0]

    def engine(self, name: str) -> docker.DockerClient:
        """A client of node `name`'s Docker engine."""
        assert self.engines is not None and name in self.engines, f"no node engine {name!r}"
        return docker.DockerClient(base_url=self.engines[name], timeout=60)

    def _engines(self) -> list[docker.DockerClient]:
        return [self.host] if self.engines is None else [self.engine(name) for name in self.engines]

    def containers(self, job_id: str | None = None, running: bool = False) -> list:
        """The job's containers (any job's when None) on every engine that answers."""
        label = f"{JOB_LABEL}={job_id}" if job_id else JOB_LABEL
        found = []
        for engine in self._engines():
            try:
                found += engine.containers.list(ignore_removed=True, all=not running, filters={"label": label})
            except (docker.errors.DockerException, requests.RequestException):
                pass  # a node engine a fault test stopped
        return found

    @staticmethod
    def describe(containers: list, tail: int = 15) -> str:
        """Each container's name, state, exit code and, for one that did not finish cleanly, its last log
        lines: what an assertion about a job's containers shows when it fails."""
        lines = []
        for c in containers:
            code = c.attrs["State"]["ExitCode"]
            lines.append(f"{c.name}: {c.status}, exit {code}")
            if c.status != "running" and code != 0:
                try:
                    text = c.logs(tail=tail).decode(errors="replace")
                except (docker.errors.DockerException, requests.RequestException) as exc:
                    text = f"(no logs: {exc.__class__.__name__})"
                lines += [f"    {line}" for line in text.splitlines()]
        return "\n".join(lines) or "(no containers)"

    def networks(self, job_id: str) -> list:
        return self.host.networks.list(filters={"label": f"{JOB_LABEL}={job_id}"})

    def assert_nothing_left(self, job_id: str, timeout: float = 60) -> None:
        wait_until(lambda: not self.containers(job_id) and not self.networks(job_id), timeout,
                   f"{job_id}'s containers and network to be gone")

    def cleanup(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait(30)
        for job_id in set(self.job_ids()) - self.known:
            for c in self.containers(job_id):
                c.remove(force=True)
            for net in self.networks(job_id):
                try:
                    net.remove()
                except docker.errors.APIError:
                    pass
