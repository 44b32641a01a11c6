"""Fixtures for pymesos-against-the-master tests (simulated agents, no Docker)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import Deadline
from scylla_singa.mesos.api.recordio import Decoder
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.mesos_framework import TestFramework


@pytest.fixture(autouse=True)
def scylla_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))


@pytest.fixture
def cluster() -> Iterator[Any]:
    """`cluster(**kw)` starts an EmbeddedMesos (simulated agents, 0.2 s allocation interval); all stopped at the end.

    Its work dir is searchable by every user (0711, as /var/lib/mesos is): agents run process tasks as
    FrameworkInfo.user ("nobody" in these tests), who must reach its sandbox."""
    made: list[EmbeddedMesos] = []
    dirs: list[str] = []

    def make(agents: Any = 2, **kw: Any) -> EmbeddedMesos:
        kw.setdefault("simulate", True)
        kw.setdefault("allocation_interval", 0.2)
        kw.setdefault("retry_interval", 0.5)
        # These tests are about Mesos's protocol, read with plain HTTP clients: the master is insecure unless a
        # test gives credentials. Authentication itself is proven in tests/security (and the e2e suites run with it).
        kw.setdefault("insecure", "credentials" not in kw)
        if "work_dir" not in kw:
            dirs.append(tempfile.mkdtemp(prefix="scylla-mesos-"))
            os.chmod(dirs[-1], 0o711)
            kw["work_dir"] = dirs[-1]
        m = EmbeddedMesos(agents, **kw)
        made.append(m)
        return m.start()
    yield make
    for m in made:
        m.stop()
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def framework() -> Iterator[Any]:
    """`framework(master, **kw)` starts a TestFramework; all stopped (TEARDOWN) at the end."""
    made: list[TestFramework] = []

    def make(master: str, start: bool = True, **kw: Any) -> TestFramework:
        f = TestFramework(master, **kw)
        made.append(f)
        return f.start() if start else f
    yield make
    for f in made:
        f.stop()


class RawSubscription:
    """A hand-made SUBSCRIBE over HTTP: its stream id, framework id, and events as they come."""

    def __init__(self, master: str, body: dict[str, Any] | None = None, read_timeout_s: float = 10.0,
                 **headers: str) -> None:
        self.master = master
        body = body or {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u", "name": "raw"}}}
        self.resp = requests.post(f"http://{master}/api/v1/scheduler", json=body, stream=True,
                                  timeout=(10, read_timeout_s), headers=headers)
        self.stream_id = self.resp.headers.get("Mesos-Stream-Id")
        self._decoder = Decoder()
        self._pending: list[dict[str, Any]] = []
        self.framework_id = None
        if self.resp.status_code == 200:
            first = self.next_event()
            assert first["type"] == "SUBSCRIBED", first
            self.framework_id = first["subscribed"]["framework_id"]["value"]

    def next_event(self) -> dict[str, Any]:
        while not self._pending:
            chunk = self.resp.raw.read1(65536) if hasattr(self.resp.raw, "read1") else self.resp.raw.read(1)
            if not chunk:
                raise EOFError("event stream ended")
            self._pending += [json.loads(r) for r in self._decoder.feed(chunk)]
        return self._pending.pop(0)

    def next_of(self, kinds: str | tuple[str, ...], timeout: float = 15.0) -> dict[str, Any]:
        """The next event of `kinds` (one type or several; HEARTBEATs and the others skipped); TimeoutError at
        the deadline (each read is bounded by the stream's heartbeats and socket timeout)."""
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        deadline = Deadline(timeout)
        while not deadline.passed():
            event = self.next_event()
            if event["type"] in kinds:
                return event
        raise TimeoutError(f"no {'/'.join(kinds)} event within {timeout}s")

    def call(self, body: dict[str, Any], stream_id: str | None = "same", **headers: str) -> requests.Response:
        if stream_id == "same":
            stream_id = self.stream_id
        if stream_id is not None:
            headers["Mesos-Stream-Id"] = stream_id
        return requests.post(f"http://{self.master}/api/v1/scheduler", json=body, headers=headers, timeout=10)

    def close(self) -> None:
        self.resp.close()


@pytest.fixture
def raw() -> Iterator[Any]:
    made: list[RawSubscription] = []

    def make(master: str, body: dict[str, Any] | None = None, read_timeout_s: float = 10.0,
             **headers: str) -> RawSubscription:
        s = RawSubscription(master, body, read_timeout_s, **headers)
        made.append(s)
        return s
    yield make
    for s in made:
        s.close()
