"""Standalone containers on a secure agent: only an authenticated caller launches one, it never runs as root
unless the agent allows it, it runs as its user with its sandbox, and none outlives the agent or its REMOVE.

How the calls are answered is compared with a live Apache Mesos 1.12 agent in
tests/apache_mesos/test_standalone_containers_as_real_mesos.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.security.agent_fixtures import AUTH, NOBODY_UID, process_cluster  # noqa: F401 - a fixture


def _call(agent: str, body: dict[str, Any], auth: Any = AUTH, timeout: float = 30) -> requests.Response:
    return requests.post(f"http://{agent}/api/v1", json=body, auth=auth, timeout=timeout,
                         headers={"Accept": "application/json"})


def _launch(cid: str, command: str, user: str | None = "nobody") -> dict[str, Any]:
    cmd: dict[str, Any] = {"value": command, **({"user": user} if user else {})}
    return {"type": "LAUNCH_CONTAINER", "launch_container": {"container_id": {"value": cid}, "command": cmd}}


def _on(kind: str, cid: str) -> dict[str, Any]:
    return {"type": kind, kind.lower(): {"container_id": {"value": cid}}}


def _standalone(agent: str) -> list[dict[str, Any]]:
    answer = _call(agent, {"type": "GET_CONTAINERS", "get_containers": {"show_standalone": True}})
    return [c for c in answer.json()["get_containers"].get("containers", []) if "executor_id" not in c]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_standalone_container_needs_credentials_and_a_user_other_than_root(process_cluster: EmbeddedMesos) -> None:
    agent = process_cluster.agent_addresses[0]
    sandboxes = Path(process_cluster.work_dir)
    anonymous = _call(agent, _launch("anon", "true"), auth=None)
    assert anonymous.status_code == 401, anonymous.text
    as_root = _call(agent, _launch("as-root", "true", user=None))   # no user: the agent's own, root
    assert as_root.status_code == 400 and "--allow-root-tasks" in as_root.text, as_root.text
    assert not list(sandboxes.rglob("containers/anon")) and not list(sandboxes.rglob("containers/as-root"))
    assert _standalone(agent) == []


def test_a_standalone_container_runs_as_its_user_in_its_sandbox_until_killed_and_removed(
        process_cluster: EmbeddedMesos) -> None:
    agent = process_cluster.agent_addresses[0]
    assert _call(agent, _launch("worker", "id -u > uid; echo $MESOS_SANDBOX; exec sleep 300")).status_code == 200
    wait_until(lambda: _standalone(agent), 30, "the container in GET_CONTAINERS")
    [listed] = _standalone(agent)
    pid = listed["container_status"]["executor_pid"]
    (sandbox,) = Path(process_cluster.work_dir).rglob("containers/worker")
    wait_until(lambda: (sandbox / "uid").is_file() and (sandbox / "uid").read_text().strip(), 30, "its uid file")
    assert (sandbox / "uid").read_text().strip() == str(NOBODY_UID)
    assert sandbox.stat().st_uid == NOBODY_UID and (sandbox / "stdout").read_text().strip() == str(sandbox)
    assert _call(agent, _on("REMOVE_CONTAINER", "worker")).status_code == 400   # running: not removed
    assert _call(agent, _on("KILL_CONTAINER", "worker")).status_code == 200
    waited = _call(agent, _on("WAIT_CONTAINER", "worker"))
    assert waited.json() == {"type": "WAIT_CONTAINER", "wait_container": {"exit_status": 9}}
    assert not _alive(pid)
    assert _call(agent, _on("REMOVE_CONTAINER", "worker")).status_code == 200
    assert not sandbox.exists()
    assert _call(agent, _on("REMOVE_CONTAINER", "worker")).status_code == 404


def test_no_standalone_container_outlives_its_agent(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))
    work = tempfile.mkdtemp(prefix="scylla-standalone-")   # searchable by every user, as /var/lib/mesos is
    os.chmod(work, 0o711)
    cluster = EmbeddedMesos(1, simulate=False, use_docker=False, work_dir=work, insecure=True).start()
    try:
        agent = cluster.agent_addresses[0]
        assert _call(agent, _launch("left", "exec sleep 300"), auth=None).status_code == 200
        wait_until(lambda: _standalone(agent), 30, "the container in GET_CONTAINERS")
        pid = _standalone(agent)[0]["container_status"]["executor_pid"]
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    wait_until(lambda: not _alive(pid), 10, f"the container's process {pid} to end with its agent")
