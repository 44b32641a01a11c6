"""Helpers for running `singa-py:latest` (the Python runtime) containers the way the framework will: one container per
SINGA process, on the job's attachable overlay, each with a sandbox holding job.conf and cluster.json."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL
from scylla_singa.swarm.overlays import create_job_network, remove_job_network

IMAGE = os.environ.get("SCYLLA_SINGA_PY_IMAGE", "singa-py:latest")
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SANDBOX = "/mnt/mesos/sandbox"


def new_job_id(prefix: str = "rt") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def labels(job: str) -> dict[str, str]:
    return {JOB_LABEL: job, MANAGED_LABEL: "true"}


def shared_dir(prefix: str) -> Path:
    """A host directory the image's non-root user can read and write (Mesos sandboxes are world-writable)."""
    path = Path(tempfile.mkdtemp(prefix=f"scylla-{prefix}-"))
    path.chmod(0o1777)
    return path


def reports(logs: str, kind: str) -> list[dict]:
    return [json.loads(line[len(kind) + 1:]) for line in logs.splitlines() if line.startswith(kind + " ")]


def example_conf(name: str, **fields) -> str:
    path = EXAMPLES / "digits-mlp" / "job.conf" if name == "digits-mlp" else EXAMPLES / "frameworks" / f"{name}.conf"
    text = path.read_text()
    for key, value in fields.items():
        text, n = re.subn(rf"^{key}:.*$", f"{key}: {value}", text, count=1, flags=re.M)
        if not n:
            text = f"{key}: {value}\n" + text
    return text


@dataclass
class ContainerJob:
    """A SINGA job as containers on its own overlay; `close` removes everything it made."""

    client: docker.DockerClient
    conf_text: str
    nprocs: int
    job: str = field(default_factory=new_job_id)
    env: dict = field(default_factory=dict)
    workspace: Path | None = None

    def __post_init__(self) -> None:
        self.sandbox = shared_dir(self.job)
        self.containers: dict[int, object] = {}
        self.network = None

    def name(self, k: int) -> str:
        return f"{self.job}-proc-{k}"

    def start(self, extra: tuple[str, ...] = ()) -> None:
        (self.sandbox / "job.conf").write_text(self.conf_text)
        (self.sandbox / "cluster.json").write_text(json.dumps({"job": self.job, "nprocs": self.nprocs, "procs": [
            {"id": k, "host": self.name(k), "port": 6723} for k in range(self.nprocs)]}))
        self.network = create_job_network(self.client, self.job)
        volumes = {str(self.sandbox): {"bind": SANDBOX, "mode": "rw"}}
        if self.workspace is not None:
            volumes[str(self.workspace)] = {"bind": "/workspace", "mode": "rw"}
        for k in range(self.nprocs):
            cmd = ["singa", "-conf", "./job.conf", "-procs_id", str(k), "-cluster", "./cluster.json",
                   "-workspace", "/workspace", *extra]
            env = {"SCYLLA_JOB_ID": self.job, "SCYLLA_PROC_ID": str(k), "MESOS_SANDBOX": SANDBOX, **self.env}
            c = self.client.containers.create(IMAGE, cmd, name=self.name(k), hostname=self.name(k),
                                              network=self.network.name, labels=labels(self.job), environment=env,
                                              volumes=volumes, working_dir=SANDBOX)
            self.containers[k] = c
        for c in self.containers.values():
            c.start()

    def logs(self, k: int, stderr: bool = False) -> str:
        return self.containers[k].logs(stdout=not stderr, stderr=stderr).decode(errors="replace")

    def wait(self, timeout_s: float, only: list[int] | None = None) -> dict[int, int]:
        """Exit codes of the containers (all, or `only`), once each has exited; WaitTimeout at the deadline."""
        codes: dict[int, int] = {}
        wanted = only if only is not None else list(self.containers)

        def all_exited() -> bool:
            for k in set(wanted) - set(codes):
                c = self.containers[k]
                c.reload()
                if c.status in ("exited", "dead"):
                    codes[k] = c.attrs["State"]["ExitCode"]
            return len(codes) == len(wanted)
        wait_until(all_exited, timeout_s, f"containers {wanted} to exit", interval_s=0.2,
                   explain=lambda: f"{sorted(set(wanted) - set(codes))} still running; logs of proc 0:\n"
                                   f"{self.logs(0, stderr=True)[-2000:]}")
        return codes

    def close(self) -> None:
        for c in self.containers.values():
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass
        if self.network is not None:
            remove_job_network(self.client, self.job)
        shutil.rmtree(self.sandbox, ignore_errors=True)


def run_to_completion(client: docker.DockerClient, cmd: list[str], job: str, volumes: dict | None = None,
                      timeout_s: float = 120.0, user: str | None = None) -> tuple[int, str, str]:
    """Run one labelled container to its end; (exit code, stdout, stderr). Always removed."""
    c = client.containers.create(IMAGE, cmd, labels=labels(job), volumes=volumes or {}, user=user)
    try:
        c.start()
        wait_until(lambda: _exited(c), timeout_s, f"container {cmd} to exit")
        return (c.attrs["State"]["ExitCode"], c.logs(stdout=True, stderr=False).decode(),
                c.logs(stdout=False, stderr=True).decode())
    finally:
        c.remove(force=True)


def _exited(c) -> bool:
    c.reload()
    return c.status in ("exited", "dead")


def ensure_image(client: docker.DockerClient) -> None:
    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        raise AssertionError(f"{IMAGE} is not built; run `make images`") from None


__all__ = ["ContainerJob", "IMAGE", "EXAMPLES", "ensure_image", "example_conf", "labels", "new_job_id", "reports",
           "run_to_completion", "shared_dir"]
