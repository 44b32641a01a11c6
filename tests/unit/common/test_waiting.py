"""Waiting on a condition with a deadline: the value it returns, the error that names what was awaited."""

from __future__ import annotations

import asyncio
import time

import pytest

from scylla_singa.common.waiting import Deadline, WaitTimeout, wait_until, wait_until_async


def test_returns_the_first_truthy_value_and_polls_until_then() -> None:
    calls = []

    def third_time() -> str | None:
        calls.append(1)
        return "ready" if len(calls) == 3 else None
    assert wait_until(third_time, 5, "the third call", interval_s=0.01) == "ready"
    assert len(calls) == 3


def test_times_out_naming_what_and_why() -> None:
    started = time.monotonic()
    with pytest.raises(WaitTimeout, match=r"timed out after 0.2s waiting for the moon: it is day") as info:
        wait_until(lambda: False, 0.2, "the moon", interval_s=0.05, explain=lambda: "it is day")
    assert 0.2 <= time.monotonic() - started < 2
    assert isinstance(info.value, TimeoutError)  # callers that catch TimeoutError keep working


def test_a_condition_true_at_once_does_not_sleep() -> None:
    started = time.monotonic()
    assert wait_until(lambda: 7, 10, "seven", interval_s=5) == 7
    assert time.monotonic() - started < 1


def test_the_async_form_lets_the_loop_run_while_it_waits() -> None:
    async def go() -> str:
        box: list[str] = []
        asyncio.get_running_loop().call_later(0.05, box.append, "set by the loop")
        return await wait_until_async(lambda: box and box[0], 5, "the loop to set it")
    assert asyncio.run(go()) == "set by the loop"


def test_the_async_form_times_out_too() -> None:
    with pytest.raises(WaitTimeout, match="waiting for never"):
        asyncio.run(wait_until_async(lambda: None, 0.1, "never"))


def test_a_deadline_never_sleeps_far_past_itself() -> None:
    deadline = Deadline(0.05)
    assert 0 < deadline.nap(10) <= 0.05 and not deadline.passed()
    time.sleep(0.06)
    assert deadline.passed() and deadline.left() == 0 and 0 < deadline.nap(10) <= 0.01
