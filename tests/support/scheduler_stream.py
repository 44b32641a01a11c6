"""A framework made by hand over the v1 scheduler API: one SUBSCRIBE stream, its events, and calls on it.

For the security suite, which sends what no driver would: it subscribes with
a FrameworkInfo of its choice, reads the RecordIO stream's JSON events, and
posts calls with the stream's id.
"""

from __future__ import annotations

import json
from typing import Any

import requests

from scylla_singa.mesos.api.recordio import Decoder

API = "/api/v1/scheduler"


class SchedulerStream:
    """One subscription: `framework_id` and `stream_id` once SUBSCRIBED (None when refused: see `answer`)."""

    def __init__(self, master: str, framework_info: dict[str, Any], timeout: float = 10.0,
                 auth: tuple[str, str] | None = None) -> None:
        self.master = master
        self.auth = auth   # (principal, secret) for a secure master
        body: dict[str, Any] = {"type": "SUBSCRIBE", "subscribe": {"framework_info": framework_info}}
        if "id" in framework_info:   # a re-subscription names its framework at the top as well
            body["framework_id"] = framework_info["id"]
        self.answer = requests.post(f"http://{master}{API}", json=body, stream=True, timeout=timeout, auth=auth)
        self.stream_id = self.answer.headers.get("Mesos-Stream-Id")
        self.framework_id: str | None = None
        self._decoder = Decoder()
        self._pending: list[dict[str, Any]] = []
        if self.answer.status_code == 200:
            self.framework_id = self.next_of("SUBSCRIBED")["subscribed"]["framework_id"]["value"]

    def next_event(self) -> dict[str, Any]:
        """The next event; the socket's read timeout bounds the wait (heartbeats keep a live stream busy)."""
        while not self._pending:
            chunk = self.answer.raw.read1(65536)
            if not chunk:
                raise EOFError("event stream ended")
            self._pending += [json.loads(record) for record in self._decoder.feed(chunk)]
        return self._pending.pop(0)

    def next_of(self, kind: str, limit: int = 200) -> dict[str, Any]:
        for _ in range(limit):
            event = self.next_event()
            if event["type"] == kind:
                return event
        raise AssertionError(f"no {kind} event in {limit} events")

    def call(self, body: dict[str, Any]) -> requests.Response:
        return requests.post(f"http://{self.master}{API}", json=body, timeout=10, auth=self.auth,
                             headers={"Mesos-Stream-Id": self.stream_id or ""})

    def teardown(self) -> None:
        """TEARDOWN (if subscribed), then close the stream."""
        if self.framework_id is not None:
            self.call({"type": "TEARDOWN", "framework_id": {"value": self.framework_id}})
        self.close()

    def close(self) -> None:
        self.answer.close()
