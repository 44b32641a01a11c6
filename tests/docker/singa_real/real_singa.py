"""Helpers for running the real Apache SINGA image (images/singa) the way the framework will.

Every SINGA process is one container running `singa-task` with the
framework's command and environment (docs/contracts.md), on a user-defined
network of the test's own with a ZooKeeper container (scylla-zookeeper).
Every container and network carries `scylla.managed=true` and
`scylla.job=<test job>` (the session's leak check sees them) and is removed
by `close()`.

The image is `singa:latest` unless SCYLLA_SINGA_IMAGE names another tag
(e.g. a development build); a tag that is not the real SINGA image fails.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL, ZOOKEEPER_IMAGE
from tests.support.job_confs import EXAMPLES, REAL_SINGA_IMAGE, conf_with, downpour4  # noqa: F401 - re-exported

IMAGE = REAL_SINGA_IMAGE
ZK_IMAGE = ZOOKEEPER_IMAGE
SANDBOX = "/mnt/mesos/sandbox"


def new_job_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def labels(job: str) -> dict[str, str]:
    return {JOB_LABEL: job, MANAGED_LABEL: "true"}


def shared_dir(prefix: str) -> Path:
    """A host directory the image's uid 1000 may write (as the framework's volume delivery makes it)."""
    path = Path(tempfile.mkdtemp(prefix=f"scylla-{prefix}-"))
    path.chmod(0o1777)
    return path


def reports(logs: str, kind: str) -> list[dict]:
    return [json.loads(line[len(kind) + 1:]) for line in logs.splitlines() if line.startswith(kind + " ")]


def require_real_singa(client: docker.DockerClient) -> None:
    """Fail (not skip) unless IMAGE exists and is the real SINGA image."""
    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{IMAGE} is not built: run `scylla-singa images build singa` (or set SCYLLA_SINGA_IMAGE)",
                    pytrace=False)
    out = client.containers.run(IMAGE, ["sh", "-c", "for c in singatool singa-task; do command -v $c; done; true"], remove=True)
    if b"singatool" not in out or b"singa-task" not in out:
        pytest.fail(f"{IMAGE} is not the real Apache SINGA image (no singatool/singa-task): build images/singa",
                    pytrace=False)


@dataclass
class ZkNetwork:
    """A user-defined bridge network with one ZooKeeper server on it."""

    client: docker.DockerClient
    job: str = field(default_factory=lambda: new_job_id("zknet"))

    def __post_init__(self) -> None:
        self.network = None
        self.zk = None

    @property
    def zk_hosts(self) -> str:
        return f"{self.job}-zk:2181"

    def start(self, timeout_s: float = 120.0) -> None:
        try:
            self.client.images.get(ZK_IMAGE)
        except docker.errors.ImageNotFound:
            pytest.fail(f"{ZK_IMAGE} is not built; run `make images`", pytrace=False)
        self.network = self.client.networks.create(f"{self.job}-net", driver="bridge", labels=labels(self.job))
        self.zk = self.client.containers.run(ZK_IMAGE, name=f"{self.job}-zk", hostname=f"{self.job}-zk",
                                             network=self.network.name, labels=labels(self.job), detach=True,
                                             environment={"ZK_HEAP": "128m"})

        def healthy() -> bool:
            self.zk.reload()
            assert self.zk.status != "exited", self.zk.logs(tail=20).decode(errors="replace")
            return self.zk.exec_run(["zk-ready"]).exit_code == 0

        wait_until(healthy, timeout_s, "ZooKeeper to answer", interval_s=0.5)

    def gateway(self) -> str:
        self.network.reload()
        return self.network.attrs["IPAM"]["Config"][0]["Gateway"]

    def close(self) -> None:
        if self.zk is not None:
            try:
                self.zk.remove(force=True, v=True)
            except docker.errors.NotFound:
                pass
        if self.network is not None:
            self.network.remove()


@dataclass
class Gang:
    """The containers of one SINGA job, attempt by attempt, on a ZkNetwork (or none for one process)."""

    client: docker.DockerClient
    conf_text: str
    nprocs: int
    net: ZkNetwork | None = None
    job: str = field(default_factory=lambda: new_job_id("real"))
    env: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sandbox = shared_dir(self.job)
        self.workspace = shared_dir(f"{self.job}-ws")
        self.containers: dict[int, object] = {}
        self.attempt = 0

    def host(self, k: int) -> str:
        return f"{self.job}-proc-{k}"

    def start(self, order: list[int] | None = None, extra: tuple[str, ...] = (), env: dict | None = None) -> None:
        """Start the next attempt's containers in `order` (default 0..n-1); the previous ones must be gone."""
        assert not self.containers, "remove the previous attempt first"
        self.attempt += 1
        (self.sandbox / "job.conf").write_text(self.conf_text)
        (self.sandbox / "cluster.json").write_text(json.dumps({"job": self.job, "nprocs": self.nprocs, "procs": [
            {"id": k, "host": self.host(k), "port": 6723} for k in range(self.nprocs)]}))
        for path in (self.sandbox / "job.conf", self.sandbox / "cluster.json"):
            path.chmod(0o644)
        volumes = {str(self.sandbox): {"bind": SANDBOX, "mode": "ro"},
                   str(self.workspace): {"bind": "/workspace", "mode": "rw"}}
        for k in order if order is not None else range(self.nprocs):
            cmd = ["singa-task", "-conf", "./job.conf", "-procs_id", str(k), "-cluster", "./cluster.json",
                   "-workspace", "/workspace", *extra]
            task = f"{self.job}.proc-{k}.a{self.attempt}"
            environment = {"SCYLLA_JOB_ID": self.job, "SCYLLA_PROC_ID": str(k), "MESOS_TASK_ID": task,
                           "SCYLLA_ATTEMPT": str(self.attempt), "MESOS_SANDBOX": SANDBOX, **self.env, **(env or {})}
            kwargs: dict = {}
            if self.net is not None:
                environment["SCYLLA_ZK_HOSTS"] = self.net.zk_hosts
                kwargs["network"] = self.net.network.name
            c = self.client.containers.create(IMAGE, cmd, name=f"{self.host(k)}-a{self.attempt}",
                                              hostname=self.host(k), labels=labels(self.job),
                                              environment=environment, volumes=volumes, working_dir=SANDBOX,
                                              **kwargs)
            if self.net is not None:
                # The framework's network alias: the name cluster.json gives the process.
                self.net.network.disconnect(c)
                self.net.network.connect(c, aliases=[self.host(k)])
            self.containers[k] = c
            c.start()

    def logs(self, k: int, stderr: bool = False) -> str:
        return self.containers[k].logs(stdout=not stderr, stderr=stderr).decode(errors="replace")

    def status(self, k: int) -> tuple[str, int]:
        c = self.containers[k]
        c.reload()
        return c.status, c.attrs["State"]["ExitCode"]

    def wait(self, timeout_s: float, only: list[int] | None = None) -> dict[int, int]:
        """Exit codes once each container (all, or `only`) has exited; AssertionError with logs at the deadline."""
        wanted = only if only is not None else sorted(self.containers)
        codes: dict[int, int] = {}

        def done() -> bool:
            for k in wanted:
                state, code = self.status(k)
                if state in ("exited", "dead"):
                    codes[k] = code
            return len(codes) == len(wanted)

        try:
            wait_until(done, timeout_s, f"processes {wanted} to exit")
        except AssertionError as exc:
            tails = "\n".join(f"--- proc {k}:\n{self.logs(k, stderr=True)[-1500:]}" for k in wanted if k not in codes)
            raise AssertionError(f"{exc}; still running: {sorted(set(wanted) - set(codes))}\n{tails}") from None
        return codes

    def expect(self, codes: dict[int, int], timeout_s: float) -> None:
        """Wait for the processes of `codes` to exit with those codes; the wrong ones' logs on failure."""
        got = self.wait(timeout_s, only=sorted(codes))
        wrong = [k for k in codes if got[k] != codes[k]]
        tails = "\n".join(f"--- proc {k} (exit {got[k]}):\n{self.logs(k, stderr=True)[-2500:]}" for k in wrong)
        assert not wrong, f"exit codes {got}, expected {codes}\n{tails}"

    def kill(self, k: int) -> None:
        self.containers[k].kill()

    def remove_attempt(self) -> None:
        for c in self.containers.values():
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass
        self.containers = {}

    def close(self) -> None:
        self.remove_attempt()
        shutil.rmtree(self.sandbox, ignore_errors=True)
        shutil.rmtree(self.workspace, ignore_errors=True)
