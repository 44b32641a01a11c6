"""Two `scylla-singa agent` processes on one work dir: the second is refused, the first keeps its identity."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import requests

from scylla_singa.common.waiting import wait_until

CLI = [sys.executable, "-m", "scylla_singa"]


def _agent(master: str, work_dir: Path) -> list[str]:
    return CLI + ["agent", "--master", master, "--host", "127.0.0.1", "--port", "0", "--simulate",
                  "--resources", "cpus:2;mem:1024", "--work-dir", str(work_dir), "--insecure"]


def _active_agent_ids(master: str) -> list[str]:
    try:
        state = requests.get(f"http://{master}/master/state", timeout=5).json()
    except requests.RequestException:
        return []
    return [s["id"] for s in state.get("slaves", []) if s.get("active")]


def test_a_second_agent_on_a_held_work_dir_is_refused_naming_it_the_holder_and_the_flag(tmp_path) -> None:
    master = subprocess.Popen(CLI + ["master", "--host", "127.0.0.1", "--port", "0", "--work-dir",
                                     str(tmp_path / "m"), "--allocation-interval", "200ms", "--insecure"],
                              stderr=subprocess.PIPE, text=True)
    first = third = None
    work_dir = tmp_path / "agent"
    try:
        address = next(m.group(1) for line in master.stderr if (m := re.search(r"listening on (\S+)", line)))
        first = subprocess.Popen(_agent(address, work_dir), stderr=subprocess.DEVNULL)
        ids = wait_until(lambda: _active_agent_ids(address), 20, "the first agent to register")
        second = subprocess.run(_agent(address, work_dir), capture_output=True, text=True, timeout=60)
        assert second.returncode != 0
        err = second.stderr
        assert str(work_dir) in err and f"pid {first.pid}" in err and "--work-dir" in err, err
        assert "Traceback" not in err
        assert _active_agent_ids(address) == ids  # the first keeps its identity and stays active
        first.terminate()
        first.wait(timeout=20)
        # The lock dies with its holder: the next agent on that work dir takes it and runs.
        third = subprocess.Popen(_agent(address, work_dir), stderr=subprocess.DEVNULL)
        lock = work_dir / "agent.lock"
        wait_until(lambda: lock.read_text().strip() == str(third.pid), 30, "the next agent to hold the work dir")
        assert third.poll() is None
    finally:
        for p in (third, first, master):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(timeout=20)
