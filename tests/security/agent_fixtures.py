"""Real agents for the task-user, files and volume attacks: an EmbeddedMesos whose agents run real processes.

Imported by test_task_users.py, test_agent_files.py and test_volumes.py (not a conftest: the security suite's
conftest is shared by every part of issue 14).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from scylla_singa.mesos.embedded import EmbeddedMesos
from scylla_singa.ui.agent_files import sandbox_of as sandbox_in_state
from tests.support.mesos_framework import TestFramework, task_info

NOBODY_UID = 65534
# The clusters here are secure, as by default, with one known framework credential for the tests' clients.
SECRET = secrets.token_urlsafe(24)
CREDENTIALS = {"scylla": SECRET}
AUTH = ("scylla", SECRET)


@pytest.fixture
def process_cluster(tmp_path, monkeypatch) -> Iterator[EmbeddedMesos]:
    """One master and one agent running process tasks (no Docker). Its work dir is searchable by every user
    (0711, as /var/lib/mesos is): tasks run as FrameworkInfo.user and must reach their sandboxes."""
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))
    work = tempfile.mkdtemp(prefix="scylla-sec-agent-")
    os.chmod(work, 0o711)
    m = EmbeddedMesos(1, simulate=False, use_docker=False, work_dir=work, allocation_interval=0.2,
                      credentials=CREDENTIALS,
                      retry_interval=0.5)
    m.start()
    try:
        yield m
    finally:
        m.stop()
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def frameworks() -> Iterator[Any]:
    """`frameworks(master, user=...)`: TestFrameworks, each stopped at the end."""
    made: list[TestFramework] = []

    def make(master: str, **kw: Any) -> TestFramework:
        kw.setdefault("principal", AUTH[0])
        kw.setdefault("secret", AUTH[1])
        f = TestFramework(master, **kw)
        made.append(f)
        return f.start()
    yield make
    for f in made:
        f.stop()


ENDED = ("TASK_FINISHED", "TASK_FAILED", "TASK_ERROR", "TASK_KILLED")


def launch_until_ended(fw: TestFramework, make_task: Callable[[dict], dict], timeout: float) -> dict[str, Any]:
    """Launch `make_task(offer)` on the next offer and wait for its end; its last status.

    An offer can be rescinded while the framework holds it (its agent restarted, say): the master then answers
    TASK_LOST with REASON_INVALID_OFFERS, as Mesos does, and a framework launches again on a fresh offer. So
    does this helper, twice at most; any other TASK_LOST is returned as the task's end."""
    for _ in range(3):
        offer = fw.take_offer()
        task = make_task(offer)
        fw.launch(offer, [task])
        status = fw.wait_state(task["task_id"]["value"], (*ENDED, "TASK_LOST"), timeout=timeout)
        if not (status["state"] == "TASK_LOST" and status.get("reason") == "REASON_INVALID_OFFERS"):
            return status
    return status


def run_task(fw: TestFramework, command: str, *, user: str | None = None, uris: list[dict] | None = None,
             env: dict[str, str] | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """Launch one command task on the next offer and wait for its end; its last status."""
    def make(offer: dict) -> dict:
        task = task_info(offer["agent_id"], command=command, uris=uris, env=env)
        if user is not None:
            task["command"]["user"] = user
        return task
    return launch_until_ended(fw, make, timeout)


def sandbox_of(agent_address: str, task_id: str) -> str:
    """The task's sandbox directory, as the agent's /state says (read the way the log viewer reads it)."""
    directory = sandbox_in_state(requests.get(f"http://{agent_address}/state", timeout=10, auth=AUTH).json(),
                                 task_id)
    assert directory is not None, f"task {task_id} not in the agent's /state"
    return directory


def task_stdout(m: EmbeddedMesos, status: dict[str, Any]) -> str:
    with open(os.path.join(sandbox_of(m.agent_addresses[0], status["task_id"]["value"]), "stdout")) as f:
        return f.read()


@pytest.fixture
def docker_cluster(tmp_path, monkeypatch) -> Iterator[EmbeddedMesos]:
    """One master and one agent on the real Docker engine; its allowed host paths: $SCYLLA_HOME/jobs."""
    import docker

    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))
    jobs = tmp_path / "home" / "jobs"
    jobs.mkdir(parents=True)
    client = docker.from_env(timeout=120)
    m = EmbeddedMesos([{"resources": "cpus:4;mem:4096;ports:[31000-31100]"}], docker_client=client,
                      credentials=CREDENTIALS,
                      allowed_host_paths=[jobs], allocation_interval=0.2, retry_interval=0.5)
    m.start()
    try:
        yield m
    finally:
        m.stop()


def run_container_task(fw: TestFramework, image: str, command: str, *, params: list[dict] | None = None,
                       volumes: list[dict] | None = None, labels: dict[str, str] | None = None,
                       timeout: float = 60.0) -> dict[str, Any]:
    """Launch one DOCKER task on the next offer and wait for its end; its last status."""
    def make(offer: dict) -> dict:
        task = task_info(offer["agent_id"], command=command, image=image)
        if params:
            task["container"]["docker"]["parameters"] = params
        if volumes:
            task["container"]["volumes"] = volumes
        if labels:
            task["labels"] = {"labels": [{"key": k, "value": v} for k, v in labels.items()]}
        return task
    return launch_until_ended(fw, make, timeout)
