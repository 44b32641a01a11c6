"""Child processes of a benchmark: start, watch CPU and memory, stop (only what we started)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 when it is gone)."""
    return sum(cpu_split(pid))


def cpu_split(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process so far ((0, 0) when it is gone): the system part is the kernel
    working for it, most of it socket I/O for the cluster's processes."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS


def io_calls(pid: int) -> tuple[int, int]:
    """(read, write) system calls of a process so far, as /proc/PID/io counts them (read/readv and
    write/writev: what uvloop's sockets use); (0, 0) when unreadable."""
    counts = {"syscr": 0, "syscw": 0}
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            key, _, number = line.partition(":")
            if key in counts:
                counts[key] = int(number)
    except (OSError, ValueError):
        pass
    return counts["syscr"], counts["syscw"]


def run_queue_wait_s(pid: int) -> float:
    """Seconds the process's main thread has spent runnable but waiting for a core (/proc/PID/schedstat,
    second field; 0 when unreadable). For a single-loop process (the master, the fleet) this says whether it
    was short of CPU or of work: its CPU percent plus this wait is what it would have used on a free core."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def stop_children_when_terminated() -> None:
    """Make SIGTERM and SIGHUP end a benchmark through its `finally` blocks, which stop its children.

    Why: each child runs in its own session (a Ctrl-C meant for the
    benchmark must not reach the master it measures first), so a benchmark
    killed by the signal's default action left its master and simulated
    fleet running, holding ports and cores. Raised as SystemExit in the main
    thread, the signal unwinds the benchmark instead.
    """
    def exit_now(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, exit_now)


class Child:
    """A child process whose output lines are kept (the last `keep`) and optionally handed to `on_line`."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                 keep: int = 200, on_line=None) -> None:
        self.name = name
        self.lines: deque[str] = deque(maxlen=keep)
        self.on_line = on_line
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1, start_new_session=True)
        self._reader = threading.Thread(target=self._read, name=f"read-{name}", daemon=True)
        self._reader.start()
        self.mark()

    def _read(self) -> None:
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if self.on_line is not None:
                try:
                    self.on_line(line)
                except Exception:  # noqa: BLE001 - a bad line must not kill the reader
                    pass

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def mark(self) -> None:
        """Start a CPU measurement window."""
        self._mark = (time.monotonic(), cpu_seconds(self.pid))
        self._marked_split = cpu_split(self.pid)
        self._marked_io = io_calls(self.pid)
        self._marked_wait = run_queue_wait_s(self.pid)

    def cpu_percent(self) -> float:
        """CPU use since `mark()`, in percent of one core."""
        t0, c0 = self._mark
        dt = time.monotonic() - t0
        return 100.0 * (cpu_seconds(self.pid) - c0) / dt if dt > 0 else 0.0

    def wait_percent(self) -> float:
        """Time its main thread waited for a core since `mark()`, in percent of the window."""
        dt = time.monotonic() - self._mark[0]
        return 100.0 * (run_queue_wait_s(self.pid) - self._marked_wait) / dt if dt > 0 else 0.0

    def kernel_share(self) -> float:
        """The part of its CPU since `mark()` spent in the kernel (system time), 0..1."""
        user, system = (now - then for now, then in zip(cpu_split(self.pid), self._marked_split))
        return system / (user + system) if user + system > 0 else 0.0

    def io_calls_since_mark(self) -> tuple[int, int]:
        """(read, write) system calls since `mark()`."""
        reads, writes = io_calls(self.pid)
        return reads - self._marked_io[0], writes - self._marked_io[1]

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def tail(self, n: int = 15) -> str:
        return "\n".join(list(self.lines)[-n:])

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM, then SIGKILL after `timeout`; only this child (its own session)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._reader.join(5)
