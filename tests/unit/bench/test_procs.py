"""A benchmark killed by SIGTERM stops the children it started (each runs in a session of its own)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

BENCHMARK = """
import sys, time
sys.path.insert(0, {repo!r})
from bench.procs import Child, stop_children_when_terminated
{install}
child = Child("sleeper", ["sleep", "120"])
try:
    print(child.pid, flush=True)   # inside the try: the signal may come as soon as the pid is out
    time.sleep(120)
finally:
    child.stop()
"""


def _child_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _run_and_terminate(install: str) -> int:
    """Start a benchmark-like script, SIGTERM it once its child runs; the child's pid."""
    script = BENCHMARK.format(repo=str(REPO), install=install)
    bench = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert bench.stdout is not None
    pid = int(bench.stdout.readline())
    assert _child_alive(pid)
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(30) == 128 + signal.SIGTERM or install == ""
    return pid


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _child_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_terminated_benchmark_stops_its_children() -> None:
    pid = _run_and_terminate("stop_children_when_terminated()")
    assert _gone_within(pid, 30), "the benchmark's child outlived it"


def test_without_the_handler_the_child_would_outlive_it() -> None:
    """Not vacuous: the signal's default action leaves the child (own session) running."""
    pid = _run_and_terminate("")
    try:
        assert not _gone_within(pid, 1.0)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_two_spinners_sharing_one_core_each_wait_for_it() -> None:
    """Run-queue wait is what tells a part short of CPU from one short of work (bench/scale.py's notes)."""
    from bench.procs import Child
    spin = [sys.executable, "-c", "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"]
    children = [Child(f"spin{i}", spin) for i in range(2)]
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and min(c.wait_percent() for c in children) < 20:
            time.sleep(0.2)
        assert min(c.wait_percent() for c in children) >= 20, [c.wait_percent() for c in children]
    finally:
        for c in children:
            c.stop()


def test_an_idle_child_does_not_wait_for_a_core() -> None:
    from bench.procs import Child
    child = Child("sleeper", ["sleep", "30"])
    try:
        time.sleep(0.5)  # the window to measure over, not a wait for a condition
        assert child.wait_percent() < 5
    finally:
        child.stop()
