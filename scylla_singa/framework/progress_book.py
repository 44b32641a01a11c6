"""Training progress as the runtime reports it, summarised per job.

The runtime POSTs one PROGRESS object per worker every disp_freq steps
(docs/contracts.md), checked and bounded by progress_report. ProgressBook
keeps the latest per worker and a short history per job, for the terminal
bar, the job record and the job view.
Thread-safe: the HTTP server writes, the terminal and the UI read.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any


def from_current_attempt(p: dict[str, Any], current_tasks: Any) -> bool:
    """Whether report `p` comes from a task of the job's current attempt.

    After a gang restart the old attempt's containers may still post for a
    moment (they are being killed); their steps would tangle the curves.
    Reports without a task id (other runtimes) are taken as they come.
    """
    task = p.get("task")
    return not isinstance(task, str) or task in current_tasks


@dataclass(frozen=True)
class Summary:
    step: int
    loss: float | None
    accuracy: float | None
    samples_per_s: float | None
    test_accuracy: float | None


class ProgressBook:
    def __init__(self, history: int = 5000) -> None:
        self._lock = threading.Lock()
        self._latest: dict[str, dict[tuple, dict[str, Any]]] = {}
        self._history: dict[str, deque] = {}
        self._size = history

    def add(self, p: dict[str, Any]) -> None:
        key = (p.get("proc"), p.get("group"), p.get("worker"), p.get("phase", "train"))
        with self._lock:
            self._latest.setdefault(p["job"], {})[key] = p
            self._history.setdefault(p["job"], deque(maxlen=self._size)).append(p)

    def history(self, job: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._history.get(job, ()))

    def summary(self, job: str) -> Summary | None:
        with self._lock:
            latest = list(self._latest.get(job, {}).values())
        train = [p for p in latest if p.get("phase", "train") == "train"]
        test = [p for p in latest if p.get("phase") == "test"]
        if not train and not test:
            return None
        step = max((p["step"] for p in train), default=0)
        mean = lambda k, ps: (sum(p[k] for p in ps if p.get(k) is not None) / n  # noqa: E731
                              if (n := sum(1 for p in ps if p.get(k) is not None)) else None)
        rate = sum(p["samples_per_s"] for p in train if p.get("samples_per_s")) or None
        newest_test = max(test, key=lambda p: p["step"]) if test else None
        return Summary(step, mean("loss", train), mean("accuracy", train), rate,
                       newest_test.get("accuracy") if newest_test else None)
