"""Keep a member's long-running processes (its agent, the first machine's masters) alive.

With systemd (a machine booted by it has /run/systemd/system), each one is a
unit: `scylla-singa-<name>.service`, enabled, `Restart=always`, so it comes
back after a crash and after a reboot. Without systemd (containers, the
namespaced machines of the tests), `scylla-singa cluster supervise` runs the
process, restarts it when it exits (1 s, doubling to 30 s while it keeps
failing quickly), forwards SIGTERM, and records itself in a pidfile; it does
not survive a reboot, and `join` says so.

The unit text and the restart schedule are pure; the rest is a thin shell.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from scylla_singa.common.files import write_text_atomic
from scylla_singa.common.waiting import wait_until
from .launcher import running, start_time

SYSTEMD_RUN_DIR = Path("/run/systemd/system")
UNIT_DIR = Path("/etc/systemd/system")
UNIT_PREFIX = "scylla-singa-"
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
HEALTHY_AFTER_S = 60.0     # a run this long resets the backoff
STOP_GRACE_S = 30.0
LOG_ROTATE_BYTES = 50 * 2**20


class SupervisorError(RuntimeError):
    """A supervised process could not be started or stopped; the message says which and why."""


@dataclass(frozen=True)
class Supervised:
    """One supervised process, as recorded in the machine's state: how to find and stop it."""

    name: str                 # e.g. "agent", "master-1"
    kind: str                 # "systemd" | "process"
    unit: str | None = None   # the unit file (systemd)
    pidfile: str | None = None  # the supervisor's pidfile (process)
    log: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"name": self.name, "kind": self.kind, "unit": self.unit, "pidfile": self.pidfile, "log": self.log}

    @classmethod
    def from_dict(cls, d: dict) -> "Supervised":
        return cls(d["name"], d["kind"], d.get("unit"), d.get("pidfile"), d.get("log"))


def has_systemd() -> bool:
    return SYSTEMD_RUN_DIR.is_dir()


def unit_name(name: str) -> str:
    return f"{UNIT_PREFIX}{name}.service"


def unit_text(name: str, argv: list[str], env: dict[str, str]) -> str:
    """A systemd unit running `argv` with `env`, restarted whatever way it ends (pure)."""
    lines = ["[Unit]", f"Description=scylla-singa {name}", "After=network-online.target docker.service",
             "Wants=network-online.target", "", "[Service]", "Type=simple",
             *(f"Environment={shlex.quote(f'{k}={v}')}" for k, v in sorted(env.items())),
             f"ExecStart={shlex.join(argv)}", "Restart=always", "RestartSec=2", "KillMode=mixed",
             f"TimeoutStopSec={STOP_GRACE_S:.0f}", "", "[Install]", "WantedBy=multi-user.target", ""]
    return "\n".join(lines)


def next_backoff(previous_s: float, ran_s: float) -> float:
    """How long to wait before the next restart, given the last wait and how long the process ran (pure)."""
    if ran_s >= HEALTHY_AFTER_S or previous_s <= 0:
        return FIRST_BACKOFF_S
    return min(previous_s * 2, MAX_BACKOFF_S)


# -- starting and stopping (thin shell) ---------------------------------------
def start(name: str, argv: list[str], env: dict[str, str], run_dir: Path, use_systemd: bool) -> Supervised:
    """Start `argv` supervised, by systemd or by a `cluster supervise` process; returns its record."""
    log = str(run_dir / f"{name}.log")
    if use_systemd:
        unit = UNIT_DIR / unit_name(name)
        write_text_atomic(unit, unit_text(name, argv, env))
        for cmd in (["systemctl", "daemon-reload"], ["systemctl", "enable", "--now", unit_name(name)]):
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if proc.returncode != 0:
                raise SupervisorError(f"`{' '.join(cmd)}` failed: {proc.stderr.strip()}")
        return Supervised(name, "systemd", unit=str(unit), log=None)
    run_dir.mkdir(parents=True, exist_ok=True)
    pidfile = run_dir / f"{name}.pid"
    if supervisor_pid(pidfile) is not None:
        return Supervised(name, "process", pidfile=str(pidfile), log=log)
    cmd = [sys.executable, "-m", "scylla_singa", "cluster", "supervise", "--name", name, "--pidfile", str(pidfile),
           "--log", log, "--", *argv]
    with open(os.devnull, "rb") as null:
        subprocess.Popen(cmd, stdin=null, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, env={**os.environ, **env, "PYTHONUNBUFFERED": "1"})
    wait_until(lambda: supervisor_pid(pidfile) is not None, 30, f"the supervisor of {name} to write {pidfile}")
    return Supervised(name, "process", pidfile=str(pidfile), log=log)


def stop(record: Supervised) -> None:
    """Stop it and everything it runs; idempotent. A systemd unit is disabled and its file removed."""
    if record.kind == "systemd":
        unit = unit_name(record.name)
        subprocess.run(["systemctl", "disable", "--now", unit], capture_output=True, timeout=120)
        Path(record.unit or UNIT_DIR / unit).unlink(missing_ok=True)
        subprocess.run(["systemctl", "daemon-reload"], capture_output=True, timeout=120)
        return
    pidfile = Path(record.pidfile or "")
    pid = supervisor_pid(pidfile)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        # its pidfile goes first, then the process itself ends: stopped means both
        wait_until(lambda: supervisor_pid(pidfile) is None and start_time(pid) is None, STOP_GRACE_S + 15,
                   f"the supervisor of {record.name} to end")
    pidfile.unlink(missing_ok=True)
    child_pidfile(pidfile).unlink(missing_ok=True)


def healthy(record: Supervised) -> bool:
    """Whether its process runs now."""
    if record.kind == "systemd":
        proc = subprocess.run(["systemctl", "is-active", unit_name(record.name)], capture_output=True, text=True)
        return proc.stdout.strip() == "active"
    return child_pid(Path(record.pidfile or "")) is not None


def child_pidfile(pidfile: Path) -> Path:
    return pidfile.with_suffix(".child.pid")


def _read_pid(path: Path) -> int | None:
    """The pid a pidfile names, if that process still runs (pid and start time both match)."""
    try:
        pid_text, start = path.read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    return pid if running(pid, start) else None


def supervisor_pid(pidfile: Path) -> int | None:
    return _read_pid(pidfile)


def child_pid(pidfile: Path) -> int | None:
    """The supervised process's pid (the supervisor's current child)."""
    return _read_pid(child_pidfile(pidfile)) if supervisor_pid(pidfile) is not None else None


def _write_pid(path: Path, pid: int) -> None:
    write_text_atomic(path, f"{pid} {start_time(pid)}\n")


# -- the supervisor process ---------------------------------------------------
def supervise(name: str, argv: list[str], pidfile: Path, log: Path) -> int:
    """Run `argv` until told to stop (SIGTERM/SIGINT), restarting it whenever it exits. Returns 0."""
    if supervisor_pid(pidfile) is not None:
        print(f"{name} is already supervised (pidfile {pidfile})", file=sys.stderr)
        return 1
    stopping = False
    child: subprocess.Popen | None = None

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    _write_pid(pidfile, os.getpid())
    backoff = 0.0
    try:
        while not stopping:
            _rotate(log)
            with open(log, "ab") as out:
                out.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} supervisor starts {name}\n".encode())
                out.flush()
                child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
            _write_pid(child_pidfile(pidfile), child.pid)
            began = time.monotonic()
            code = _wait(child, stopping_flag=lambda: stopping)
            ran = time.monotonic() - began
            if stopping:
                break
            backoff = next_backoff(backoff, ran)
            with open(log, "ab") as out:
                out.write(f"--- {name} exited with {code} after {ran:.1f} s; restarting in {backoff:.0f} s\n"
                          .encode())
            deadline = time.monotonic() + backoff
            while not stopping and time.monotonic() < deadline:
                time.sleep(0.2)
    finally:
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        child_pidfile(pidfile).unlink(missing_ok=True)
        pidfile.unlink(missing_ok=True)
    return 0


def _wait(child: subprocess.Popen, stopping_flag) -> int:
    """Wait for the child; once stopping, give it the grace period, then kill it."""
    deadline: float | None = None
    while True:
        try:
            return child.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            if stopping_flag():
                deadline = deadline or time.monotonic() + STOP_GRACE_S
                if time.monotonic() > deadline:
                    child.kill()


def _rotate(log: Path) -> None:
    try:
        if log.stat().st_size > LOG_ROTATE_BYTES:
            os.replace(log, log.with_suffix(log.suffix + ".1"))
    except FileNotFoundError:
        pass
