"""Command tasks (no ContainerInfo) on a real agent: sandbox, fetcher, files endpoints, kill."""

from __future__ import annotations

import http.server
import io
import os
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from tests.support.mesos_framework import task_info


@pytest.fixture
def web_root(tmp_path) -> Iterator[tuple[str, Path]]:
    """A static HTTP server on a free port that also fakes WebHDFS OPEN (redirect to the file)."""
    root = tmp_path / "www"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def do_GET(self):  # noqa: N802 - http.server's naming
            if self.path.startswith("/webhdfs/v1/") and self.path.endswith("?op=OPEN"):
                self.send_response(307)
                self.send_header("Location", "/" + self.path[len("/webhdfs/v1/"):-len("?op=OPEN")].lstrip("/"))
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()
    thread.join()


def _sandbox(agent_address: str, task_id: str) -> str:
    state = requests.get(f"http://{agent_address}/state", timeout=10).json()
    for group in ("frameworks", "completed_frameworks"):
        for fw in state[group]:
            for ex in fw["executors"] + fw["completed_executors"]:
                if ex["id"] == task_id:
                    return ex["directory"]
    raise AssertionError(f"task {task_id} not in the agent's /state")


def test_process_task_fetches_uris_runs_in_its_sandbox_and_logs_are_readable(cluster, framework, web_root,
                                                                            tmp_path) -> None:
    base, root = web_root
    (root / "hello.txt").write_text("from http\n")
    (root / "data").mkdir()
    (root / "data" / "conf.txt").write_text("from hdfs\n")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        info = tarfile.TarInfo("pkg/inside.txt")
        payload = b"extracted\n"
        info.size = len(payload)
        t.addfile(info, io.BytesIO(payload))
    local = tmp_path / "home" / "jobs"   # local files are fetched only from the agent's fetcher roots
    local.mkdir(parents=True, exist_ok=True)
    archive = local / "pkg.tar.gz"
    archive.write_bytes(buf.getvalue())
    script = local / "run.sh"
    script.write_text("#!/bin/sh\necho script-ran\n")
    m = cluster(1, simulate=False, use_docker=False, hdfs=base)
    f = framework(m.master_address)
    offer = f.take_offer()
    uris = [{"value": f"{base}/hello.txt"}, {"value": f"file://{archive}"},
            {"value": str(script), "executable": True, "output_file": "go.sh"},
            {"value": "hdfs://namenode:8020/data/conf.txt", "output_file": "job.conf"}]
    cmd = ('cat hello.txt pkg/inside.txt job.conf; ./go.sh; echo "sandbox=$MESOS_SANDBOX pwd=$(pwd)"; '
           'echo "task=$MESOS_TASK_ID custom=$CUSTOM"; echo oops >&2')
    task = task_info(offer["agent_id"], command=cmd, uris=uris, env={"CUSTOM": "yes"})
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_FINISHED")
    sandbox = _sandbox(m.agent_addresses[0], task["task_id"]["value"])
    agent = f"http://{m.agent_addresses[0]}"
    out = requests.get(f"{agent}/files/read", params={"path": f"{sandbox}/stdout", "offset": 0}, timeout=10).json()
    assert out["offset"] == 0
    lines = out["data"].splitlines()
    assert lines[:4] == ["from http", "extracted", "from hdfs", "script-ran"]
    assert lines[4] == f"sandbox={sandbox} pwd={os.path.realpath(sandbox)}"
    assert lines[5] == f"task={task['task_id']['value']} custom=yes"
    size = len(out["data"].encode())
    end = requests.get(f"{agent}/files/read", params={"path": f"{sandbox}/stdout", "offset": -1}, timeout=10)
    assert end.json() == {"data": "", "offset": size}
    part = requests.get(f"{agent}/files/read", params={"path": f"{sandbox}/stdout", "offset": 5, "length": 4},
                        timeout=10).json()
    assert part == {"data": "http", "offset": 5}
    err = requests.get(f"{agent}/files/download", params={"path": f"{sandbox}/stderr"}, timeout=10)
    assert err.text == "oops\n"
    names = {os.path.basename(e["path"]) for e in
             requests.get(f"{agent}/files/browse", params={"path": sandbox}, timeout=10).json()}
    assert {"stdout", "stderr", "hello.txt", "pkg", "go.sh", "job.conf", "pkg.tar.gz"} <= names
    for outside in ("/etc/passwd", f"{sandbox}/../../../../../../../../etc/passwd", "/nonexistent"):
        r = requests.get(f"{agent}/files/read", params={"path": outside, "offset": 0}, timeout=10)
        assert r.status_code == 404, outside
    assert requests.get(f"{agent}/health", timeout=10).status_code == 200


def test_failed_fetch_fails_the_task_with_a_clear_message(cluster, framework, web_root) -> None:
    base, _ = web_root
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], command="true", uris=[{"value": f"{base}/missing.tar.gz"}])
    f.launch(offer, [task])
    status = f.wait_state(task["task_id"]["value"], "TASK_FAILED")
    assert status["reason"] == "REASON_CONTAINER_LAUNCH_FAILED"
    assert "Failed to fetch" in status["message"] and "missing.tar.gz" in status["message"] and "404" in status["message"]
    assert f.sched.states(task["task_id"]["value"]) == ["TASK_FAILED"]


def test_killing_a_process_task_sends_sigterm_first(cluster, framework) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    cmd = "trap 'echo got-term > term; exit 0' TERM; echo ready > ready; while true; do sleep 0.05; done"
    task = task_info(offer["agent_id"], command=cmd, grace_s=5)
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    sandbox = Path(_sandbox(m.agent_addresses[0], task["task_id"]["value"]))
    f.sched.wait(lambda: (sandbox / "ready").exists(), what="the trap to be installed")
    f.driver.killTask(task["task_id"])
    f.wait_state(task["task_id"]["value"], "TASK_KILLED")
    assert (sandbox / "term").read_text() == "got-term\n"


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie awaiting its reaper counts as gone: it runs nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _written_pids(sandbox: Path) -> list[int] | None:
    """The pids the task wrote to its sandbox (shell, child), once both are there."""
    try:
        return [int((sandbox / name).read_text()) for name in ("shell", "child")]
    except (FileNotFoundError, ValueError):
        return None


def test_a_process_task_that_ignores_sigterm_is_killed_after_its_grace_period(cluster, framework) -> None:
    grace = 2.0
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    # the shell and its child both ignore SIGTERM (an ignored signal stays ignored across fork and exec)
    cmd = "trap '' TERM; sleep 300 & echo $! > child; echo $$ > shell; wait"
    task = task_info(offer["agent_id"], command=cmd, grace_s=grace)
    tid = task["task_id"]["value"]
    f.launch(offer, [task])
    f.wait_state(tid, "TASK_RUNNING")
    sandbox = Path(_sandbox(m.agent_addresses[0], tid))
    pids = wait_until(lambda: _written_pids(sandbox), 10, "the task to write its pids", interval_s=0.05)
    assert all(_running(p) for p in pids)
    killed_at = time.monotonic()
    f.driver.killTask(task["task_id"])
    status = f.wait_state(tid, "TASK_KILLED", timeout=grace + 10)
    waited = time.monotonic() - killed_at
    assert waited >= grace - 0.2, f"TASK_KILLED after {waited:.2f}s: SIGKILL came before the grace period"
    assert f.sched.states(tid)[-1] == "TASK_KILLED" and "TASK_FAILED" not in f.sched.states(tid)
    assert status["agent_id"] == offer["agent_id"]
    wait_until(lambda: not any(_running(p) for p in pids), 5, "the task's processes to be gone", interval_s=0.05)


def test_what_a_process_task_leaves_running_ends_with_it(cluster, framework) -> None:
    """Mesos destroys a task's container when its command ends: a process it started in the background does
    not outlive it (nor keep using the resources the task gave back)."""
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], command="sleep 300 & echo $! > child; echo $$ > shell; exit 0")
    tid = task["task_id"]["value"]
    f.launch(offer, [task])
    f.wait_state(tid, "TASK_FINISHED")
    sandbox = Path(_sandbox(m.agent_addresses[0], tid))
    child = _written_pids(sandbox)[1]
    wait_until(lambda: not _running(child), 5, "the task's background process to be gone", interval_s=0.05)
