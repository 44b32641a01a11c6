"""`cluster supervise` as join starts it without systemd: a real supervisor process and its child."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from scylla_singa.cluster import supervisor
from scylla_singa.cluster.launcher import start_time
from scylla_singa.common.waiting import wait_until

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def _alive(pid: int) -> bool:
    return start_time(pid) is not None


def test_a_killed_child_is_restarted_and_stop_ends_both_and_removes_the_pidfiles(tmp_path: Path) -> None:
    record = supervisor.start("sleeper", SLEEPER, {}, tmp_path / "run", use_systemd=False)
    pidfile = Path(record.pidfile or "")
    try:
        first = wait_until(lambda: supervisor.child_pid(pidfile), 30, "the first child")
        assert supervisor.healthy(record)
        # Starting it again keeps the one that runs.
        assert supervisor.start("sleeper", SLEEPER, {}, tmp_path / "run", use_systemd=False) == record
        os.kill(first, signal.SIGKILL)
        second = wait_until(lambda: (p := supervisor.child_pid(pidfile)) not in (None, first) and p, 30,
                            "the supervisor to start the child again")
        boss = supervisor.supervisor_pid(pidfile)
        assert boss is not None
    finally:
        supervisor.stop(record)
    assert not pidfile.exists() and not supervisor.child_pidfile(pidfile).exists()
    assert not _alive(second) and not _alive(boss)
    log = Path(record.log or "").read_text()
    assert log.count("supervisor starts sleeper") == 2 and "exited with -9" in log
    supervisor.stop(record)   # idempotent


def test_a_child_that_keeps_failing_is_restarted_later_and_later(tmp_path: Path) -> None:
    record = supervisor.start("failer", [sys.executable, "-c", "raise SystemExit(3)"], {}, tmp_path / "run",
                              use_systemd=False)
    log = Path(record.log or "")
    try:
        wait_until(lambda: log.exists() and log.read_text().count("exited with 3") >= 2, 30, "two failures")
    finally:
        supervisor.stop(record)
    text = log.read_text()
    assert "restarting in 1 s" in text and "restarting in 2 s" in text, text
    assert not supervisor.healthy(record)
