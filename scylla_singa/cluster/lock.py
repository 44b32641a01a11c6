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

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scylla_singa.common.pid_lock import LockHeld, PidLock

LOCK_DIR = Path("/run/lock")
_held: dict[str, int] = {}  # prefix -> depth, in this process


class ClusterBusy(RuntimeError):
    """Another process is bringing the same cluster up or down."""


def lock_path(prefix: str) -> Path:
    return (LOCK_DIR if LOCK_DIR.is_dir() else Path("/tmp")) / f"scylla-cluster-{prefix}.lock"


@contextmanager
def exclusive(prefix: str) -> Iterator[None]:
    """Hold cluster `prefix`'s lock; ClusterBusy naming the holder's pid when another process has it.

    The lock file stays (in a tmpfs, like dpkg's): see common.pid_lock.
    """
    if _held.get(prefix):
        _held[prefix] += 1
        try:
            yield
        finally:
            _held[prefix] -= 1
        return
    path = lock_path(prefix)
    try:
        held = PidLock(path).acquire()
    except LockHeld as exc:
        raise ClusterBusy(f"another scylla-singa (pid {exc.holder}) is bringing cluster {prefix!r} up or down; "
                          f"wait for it to end (lock {path})") from None
    _held[prefix] = 1
    try:
        yield
    finally:
        del _held[prefix]
        held.release()
