"""An exclusive lock on a file that names the process holding it.

Used where two processes on one machine must never work on the same thing
at once (one cluster prefix brought up or down, one agent work dir). The
lock is an flock, so the kernel drops it when the holder dies: a crash
never leaves a stale lock. The holder writes its pid into the file, so the
one refused can say who holds it. The file is never unlinked: a process that
opened it before could otherwise lock an inode nobody else sees any more.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class LockHeld(RuntimeError):
    """Another live process holds the lock; `holder` is its pid as it wrote it ("?" if it wrote none)."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is locked by pid {holder}")
        self.path, self.holder = path, holder


class PidLock:
    """Hold `path` exclusively until release() (or the process's end)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def acquire(self) -> "PidLock":
        """Take the lock without waiting; LockHeld naming the holder's pid when another process has it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise LockHeld(self.path, holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None

    def __enter__(self) -> "PidLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
