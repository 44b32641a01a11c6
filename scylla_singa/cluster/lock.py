"""One `cluster up` or `cluster down` per cluster prefix at a time on this machine.

Two of them racing on one prefix would create and remove the same
namespaces, bridges and engines under each other. The lock is an flock on
/run/lock/scylla-cluster-<prefix>.lock, machine-wide because the names a
prefix makes (namespaces, links, rules) are machine-wide whatever the
SCYLLA_HOME. The kernel drops it when the process dies, so a crash never
leaves a stale lock. `up` calls `down` to clear an unfinished cluster: the
lock is re-entrant within a process.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_DIR = Path("/run/lock")
_held: dict[str, int] = {}  # prefix -> depth, in this process


class ClusterBusy(RuntimeError):
    """Another process is bringing the same cluster up or down."""


def lock_path(prefix: str) -> Path:
    return (LOCK_DIR if LOCK_DIR.is_dir() else Path("/tmp")) / f"scylla-cluster-{prefix}.lock"


@contextmanager
def exclusive(prefix: str) -> Iterator[None]:
    """Hold cluster `prefix`'s lock; ClusterBusy naming the holder's pid when another process has it.

    The lock file stays (in a tmpfs, like dpkg's): unlinking it could let a
    process that opened it before lock an inode nobody else sees any more.
    """
    if _held.get(prefix):
        _held[prefix] += 1
        try:
            yield
        finally:
            _held[prefix] -= 1
        return
    path = lock_path(prefix)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise ClusterBusy(f"another scylla-singa (pid {holder}) is bringing cluster {prefix!r} up or down; "
                              f"wait for it to end (lock {path})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[prefix] = 1
        try:
            yield
        finally:
            del _held[prefix]
    finally:
        os.close(fd)
