"""Waiting on a condition with a deadline, never sleep-and-hope.

`wait_until` polls from a thread, `wait_until_async` from a coroutine (it
sleeps on the event loop, so the loop keeps serving what the condition
waits for). Both return the condition's first truthy value and raise
WaitTimeout naming what was awaited, plus `explain()` when given, which
says why it did not happen (it runs once, at the end).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    """A condition did not hold within its deadline; the message says which, and why when known."""


class Deadline:
    """A point `timeout_s` from now on the monotonic clock."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.at = time.monotonic() + timeout_s

    def passed(self) -> bool:
        return time.monotonic() > self.at

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def nap(self, interval_s: float) -> float:
        """How long to sleep before the next look: `interval_s`, but not far past the deadline."""
        return min(interval_s, self.left()) or min(interval_s, 0.01)

    def timeout(self, what: str, explain: Callable[[], str] | None = None) -> WaitTimeout:
        detail = f": {explain()}" if explain is not None else ""
        return WaitTimeout(f"timed out after {self.timeout_s:g}s waiting for {what}{detail}")


def _checked(condition: Callable[[], T], deadline: Deadline, what: str,
             explain: Callable[[], str] | None) -> T:
    """The condition's value now; WaitTimeout when it is falsy and the deadline has passed."""
    value = condition()
    if not value and deadline.passed():
        raise deadline.timeout(what, explain)
    return value


def wait_until(condition: Callable[[], T], timeout_s: float, what: str, *, interval_s: float = 0.1,
               explain: Callable[[], str] | None = None) -> T:
    """Poll `condition` every `interval_s` until it returns something truthy, which is returned."""
    deadline = Deadline(timeout_s)
    while not (value := _checked(condition, deadline, what, explain)):
        time.sleep(deadline.nap(interval_s))
    return value


async def wait_until_async(condition: Callable[[], T], timeout_s: float, what: str, *, interval_s: float = 0.02,
                           explain: Callable[[], str] | None = None) -> T:
    """`wait_until` for coroutines: the same contract, sleeping on the running event loop."""
    deadline = Deadline(timeout_s)
    while not (value := _checked(condition, deadline, what, explain)):
        await asyncio.sleep(deadline.nap(interval_s))
    return value
