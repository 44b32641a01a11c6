"""Full garbage collections of a long-running loop paced by time, not by how many objects survive.

Why: CPython starts a full (oldest-generation) collection whenever the
objects promoted since the last one exceed a quarter of the old heap. A
master with 50,000 agents holds over two million tracked objects, and every
running task's records live long enough to be promoted, so at 1,500 tasks/s
it ran a full collection every five to ten seconds, each a 1-2 s pause of
its one loop: about a seventh of its time (measured with gc.callbacks;
docs/design.md, "The garbage collector of a master with 50,000 agents").
Young garbage, where nearly all reference cycles die, is still collected
as it comes (generations 0 and 1 keep CPython's thresholds); only the full
sweep waits, for at most `interval_s`, so cyclic garbage that reached the
old generation is held at most that long.
"""

from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import dataclass, field

DEFAULT_INTERVAL_S = 300.0
_NEVER = 2**31 - 1   # an oldest-generation threshold no count reaches: no automatic full collection


@dataclass
class FullCollectionPacer:
    """Runs `gc.collect()` every `interval_s` on a loop, with CPython's automatic full collections off.

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
        young, middle, _ = self._saved
        gc.set_threshold(young, middle, _NEVER)
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
