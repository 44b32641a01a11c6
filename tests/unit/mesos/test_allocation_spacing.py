"""Allocation rounds asked for by changes are coalesced and spaced (Master.schedule_allocation, issue 17):
at most one round per ALLOCATION_SPACING_S, yet a change after a quiet spell is allocated on the next pass."""

from __future__ import annotations

import asyncio

from scylla_singa.mesos.master.master_core import ALLOCATION_SPACING_S, Master
from scylla_singa.mesos.master.master_records import MasterConfig


def _counting_master(loop: asyncio.AbstractEventLoop) -> tuple[Master, list[float]]:
    m = Master(MasterConfig(work_dir=None, allocation_interval=3600.0))
    m.start(loop)
    starts: list[float] = []
    real = m._allocate

    def counting() -> None:
        starts.append(loop.time())   # just before the round notes its own start
        real()
    m._allocate = counting   # type: ignore[method-assign]
    return m, starts


def test_changes_on_every_pass_get_rounds_at_most_one_spacing_apart() -> None:
    async def scenario() -> list[float]:
        loop = asyncio.get_running_loop()
        m, starts = _counting_master(loop)
        try:
            busy_until = loop.time() + 40 * ALLOCATION_SPACING_S
            while loop.time() < busy_until:   # something changes on every loop pass
                m.schedule_allocation()
                m.schedule_allocation()
                await asyncio.sleep(0)
        finally:
            m.stop()
        return starts
    starts = asyncio.run(scenario())
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(starts) >= 5, starts                       # it did allocate, again and again
    assert len(starts) <= 40 + 2                          # not once per pass
    assert min(gaps) >= ALLOCATION_SPACING_S * 0.9, gaps     # a pass apart would be microseconds


def test_a_change_after_a_quiet_spell_is_allocated_on_the_next_pass() -> None:
    async def scenario() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        m, starts = _counting_master(loop)
        try:
            await asyncio.sleep(2 * ALLOCATION_SPACING_S)
            before = len(starts)
            m.schedule_allocation()
            await asyncio.sleep(0)
            return before, len(starts)
        finally:
            m.stop()
    before, after = asyncio.run(scenario())
    assert after == before + 1


def test_a_stopped_master_runs_no_scheduled_round() -> None:
    async def scenario() -> list[float]:
        loop = asyncio.get_running_loop()
        m, starts = _counting_master(loop)
        m.schedule_allocation()
        await asyncio.sleep(0)
        m.schedule_allocation()   # within the spacing: scheduled for later
        m.stop()
        await asyncio.sleep(3 * ALLOCATION_SPACING_S)
        m.schedule_allocation()   # after stop: nothing
        await asyncio.sleep(3 * ALLOCATION_SPACING_S)
        return starts
    assert len(asyncio.run(scenario())) == 1
