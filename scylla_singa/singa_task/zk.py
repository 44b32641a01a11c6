"""The ZooKeeper side of the rendezvous (kazoo): the attempt node, marks, waits and peer watch.

The rules (paths, who waits for whom, what a lost peer is) are in
rendezvous.py; this module only talks to ZooKeeper. Every wait has a
deadline and raises PeerMissing naming the processes that did not appear.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from . import rendezvous as rv


T = TypeVar("T")


def poll(check: Callable[[], T | None], deadline: float, interval_s: float = 0.2) -> T | None:
    """`check()`'s first non-None result, or None once time.monotonic() passes `deadline`."""
    while True:
        result = check()
        if result is not None or time.monotonic() >= deadline:
            return result
        time.sleep(interval_s)


class PeerMissing(RuntimeError):
    """Peers that never appeared (or vanished) within the start deadline."""

    def __init__(self, procs: list[int], what: str) -> None:
        super().__init__(f"peer process{'es' if len(procs) > 1 else ''} {', '.join(map(str, procs))} {what}")
        self.procs = procs


class ZkUnreachable(RuntimeError):
    pass


class AttemptRendezvous:
    """One wrapper's view of its attempt in ZooKeeper (`hosts`: "h1:2181,h2:2181")."""

    def __init__(self, hosts: str, job: str, attempt: int, proc: int, nprocs: int) -> None:
        from kazoo.client import KazooClient

        self.job, self.attempt, self.proc, self.nprocs = job, attempt, proc, nprocs
        self.path = rv.attempt_path(job, attempt)
        self.client = KazooClient(hosts=hosts, timeout=10.0)
        self.hosts = hosts
        self._seen_live: set[int] = set()
        self._lost: set[int] = set()
        self._watching = False
        self._lock = threading.Lock()

    def connect(self, timeout_s: float) -> None:
        try:
            self.client.start(timeout=timeout_s)
        except Exception as exc:  # kazoo raises its own timeout type
            raise ZkUnreachable(f"ZooKeeper at {self.hosts} did not answer within {timeout_s:.0f}s ({exc})") from exc

    def close(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except Exception:  # noqa: BLE001 - closing must not mask the exit code
            pass

    # -- process 0 ---------------------------------------------------------
    def publish(self, info: dict[str, Any]) -> None:
        """Publish `info` for this attempt (ephemeral: gone with process 0); drop earlier attempts' nodes."""
        parent = f"{rv.SCYLLA_JOBS}/{self.job}"
        self.client.ensure_path(self.path)
        for stale in rv.stale_attempts(self.client.get_children(parent), self.attempt):
            self.client.delete(f"{parent}/{stale}", recursive=True)
        info_path = rv.info_path(self.job, self.attempt)
        if self.client.exists(info_path):
            self.client.delete(info_path)
        self.client.create(info_path, json.dumps(info).encode(), ephemeral=True)

    # -- everyone ----------------------------------------------------------
    def read_attempt(self, deadline: float) -> dict[str, Any]:
        """Process 0's published info, waiting for it until `deadline` (time.monotonic())."""
        info_path = rv.info_path(self.job, self.attempt)

        def published() -> dict[str, Any] | None:
            data = self.client.get(info_path)[0] if self.client.exists(info_path) else b""
            return json.loads(data.decode()) if data else None

        info = poll(published, deadline)
        if info is None:
            raise PeerMissing([0], "did not publish the attempt (no SINGA job id) before the start deadline")
        return info

    def mark_live(self) -> None:
        self.client.ensure_path(self.path)
        self.client.create(f"{self.path}/live-{self.proc}", b"", ephemeral=True)

    def mark_done(self) -> None:
        node = f"{self.path}/done-{self.proc}"
        if not self.client.exists(node):
            self.client.create(node, b"")

    def wait_predecessors(self, singa_job: int, deadline: float) -> None:
        """Block until SINGA processes 0..proc-1 of `singa_job` have registered."""
        parent = f"{rv.singa_job_path(singa_job)}/proc"

        def registered() -> set[int]:
            return rv.registered_procs(self.client.get_children(parent) if self.client.exists(parent) else [])

        if poll(lambda: True if rv.may_register(self.proc, registered()) else None, deadline, 0.1) is None:
            raise PeerMissing(rv.missing_before(self.proc, registered()),
                              f"did not register with SINGA job {singa_job} before the start deadline")

    def wait_all_live(self, deadline: float) -> None:
        """Block until every process of the attempt has marked itself live (or finished)."""
        def missing() -> list[int]:
            children = self.client.get_children(self.path)
            present = rv.marks(children, "live") | rv.marks(children, "done")
            return [k for k in range(self.nprocs) if k not in present]

        if poll(lambda: True if not missing() else None, deadline) is None:
            raise PeerMissing(missing(), "never started before the start deadline")

    def watch_peers(self, on_lost: Callable[[set[int]], None]) -> None:
        """Call `on_lost(procs)` (once) when a live peer vanishes without having finished."""
        from kazoo.recipe.watchers import ChildrenWatch

        self._watching = True

        def changed(children: list[str]) -> bool:
            if not self._watching:
                return False
            with self._lock:
                self._seen_live |= rv.marks(children, "live")
                lost = rv.lost_peers(self._seen_live, children, self.proc) - self._lost
                self._lost |= lost
            if lost:
                on_lost(lost)
            return True

        ChildrenWatch(self.client, self.path, changed)

    def stop_watching(self) -> None:
        self._watching = False
