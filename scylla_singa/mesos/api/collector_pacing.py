"""Garbage collections of a long-running loop past the youngest generation paced by time, not by counts.

Why: CPython starts a full (oldest-generation) collection whenever the
objects promoted since the last one exceed a quarter of the old heap. A
master with 50,000 agents holds over two million tracked objects, and every
running task's records live long enough to be promoted, so at 1,500 tasks/s
it ran a full collection every five to ten seconds, each a 1-2 s pause of
its one loop: about a seventh of its time (measured with gc.callbacks;
docs/design.md, "The garbage collector of a master with 50,000 agents").
The middle generation's collections (one per ten young ones) are the same
waste in small: they look again at every record that survived a young
collection; in a whole run at 50,000 agents they found 684 unreachable
objects while taking 3% of the master's CPU time and 9% of the simulated
fleet's.
So only the youngest generation, where cycles that die at all die, keeps
CPython's threshold; the rest is collected by one full sweep every
`interval_s`, so cyclic garbage that outlived a young collection is held at
most that long.
"""

from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import dataclass, field

DEFAULT_INTERVAL_S = 300.0
_NEVER = 2**31 - 1   # a threshold no count reaches: no automatic collection of that generation


@dataclass
class FullCollectionPacer:
    """Runs `gc.collect()` every `interval_s` on a loop, with CPython's automatic collections of the
    middle and oldest generations off (the youngest keeps its threshold).

    `start(loop)` takes over, `stop()` gives CPython its thresholds back.
    `collections` and `seconds` say how many full collections ran and how
    long they took in all (what a test or a profile reads).
    """

    interval_s: float = DEFAULT_INTERVAL_S
    collections: int = 0
    seconds: float = 0.0
    _saved: tuple[int, int, int] | None = None
    _timer: asyncio.TimerHandle | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._saved is not None:
            return
        self._saved = gc.get_threshold()
        young = self._saved[0]
        gc.set_threshold(young, _NEVER, _NEVER)
        self._loop = loop
        self._timer = loop.call_later(self.interval_s, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def collect_now(self) -> None:
        started = time.perf_counter()
        gc.collect()
        self.seconds += time.perf_counter() - started
        self.collections += 1

    def _tick(self) -> None:
        self.collect_now()
        if self._saved is not None and self._loop is not None:
            self._timer = self._loop.call_later(self.interval_s, self._tick)
