"""PROGRESS and FINAL lines on stdout, and progress POSTed to SCYLLA_PROGRESS_URL.

Each report is one line, `PROGRESS {json}` or `FINAL {json}`, flushed at
once. With a URL, PROGRESS payloads are also POSTed (Content-Type
application/json) by a background thread from a bounded queue: a slow or
dead endpoint never blocks or stops training; reports that do not fit in the
queue are dropped, and the first failure is said once on stderr. A POST
carries the Mesos task id too (`task`, from MESOS_TASK_ID), so the framework
can drop late reports of an attempt it has already replaced, and the job's
progress token (SCYLLA_PROGRESS_TOKEN) as `Authorization: Bearer`: the
framework takes reports only with it. The token is never printed.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import urllib.request
from typing import TextIO

from scylla_singa.contracts import PROGRESS_PREFIX


class ProgressSink:
    def __init__(self, url: str | None = None, out: TextIO | None = None, err: TextIO | None = None,
                 timeout_s: float = 2.0, max_queued: int = 1000, task: str | None = None,
                 token: str | None = None) -> None:
        self.url = url or None
        self.task = task or None
        self._headers = {"Content-Type": "application/json",
                         **({"Authorization": f"Bearer {token}"} if token else {})}
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.timeout_s = timeout_s
        self.failures = 0
        self.posted = 0
        self._queue: queue.Queue = queue.Queue(maxsize=max_queued)
        self._thread: threading.Thread | None = None
        if self.url:
            self._thread = threading.Thread(target=self._post_loop, name="progress-post", daemon=True)
            self._thread.start()

    def report(self, kind: str, payload: dict) -> None:
        self.out.write(f"{kind} {json.dumps(payload, separators=(', ', ': '))}\n")
        self.out.flush()
        if self.url and kind == PROGRESS_PREFIX:
            try:
                self._queue.put_nowait({**payload, "task": self.task} if self.task else payload)
            except queue.Full:
                pass

    def close(self, timeout_s: float = 2.0) -> None:
        """Give queued POSTs up to `timeout_s` to go out; never raises."""
        if self._thread is None:
            return
        self._queue.put(None)
        self._thread.join(timeout_s)

    def _post_loop(self) -> None:
        while True:
            payload = self._queue.get()
            if payload is None:
                return
            try:
                req = urllib.request.Request(self.url, data=json.dumps(payload).encode(), method="POST",
                                             headers=self._headers)
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    resp.read()
                self.posted += 1
            except Exception as exc:  # noqa: BLE001 - posting must never stop training
                self.failures += 1
                if self.failures == 1:
                    self.err.write(f"singa: posting progress to {self.url} failed ({exc}); training continues\n")
                    self.err.flush()
