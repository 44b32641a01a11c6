"""Full garbage collections paced by time (mesos/api/collector_pacing.py, event_loop.run).

- While a pacer runs, CPython collects only the youngest generation on its
  own; the pacer runs a full collection every interval, and cyclic garbage
  that outlived a young collection is freed by it. Young cycles are still
  freed as they come.
- Stopping it (or `event_loop.run` returning) gives CPython its thresholds back.
- The master's and the agent's --full-collection-interval refuse a negative value.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from click.testing import CliRunner

from scylla_singa.cli.mesos_commands import agent, master
from scylla_singa.mesos.api import event_loop
from scylla_singa.mesos.api.collector_pacing import FullCollectionPacer


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _old_cycle() -> weakref.ref:
    """A reference cycle that has reached the oldest generation, then dropped: only a full collection
    frees it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gc.collect(1)   # survivors of a generation-1 collection move to the oldest generation
    return weakref.ref(a)


async def _until(check, timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def test_the_pacer_owns_full_collections_while_it_runs_and_gives_them_back() -> None:
    before = gc.get_threshold()

    async def main() -> FullCollectionPacer:
        pacer = FullCollectionPacer(interval_s=0.05)
        pacer.start(asyncio.get_running_loop())
        young, middle, oldest = gc.get_threshold()
        assert young == before[0] and middle >= 2**30 and oldest >= 2**30   # only young collections of its own
        full_before = gc.get_stats()[2]["collections"]
        dead = _old_cycle()
        await _until(lambda: dead() is None and pacer.collections >= 2, 10.0)
        assert gc.get_stats()[2]["collections"] >= full_before + 2
        assert pacer.seconds > 0
        pacer.stop()
        assert gc.get_threshold() == before
        stopped_at = pacer.collections
        await asyncio.sleep(0.2)
        assert pacer.collections == stopped_at   # its timer is gone with it
        return pacer

    asyncio.run(main())


def test_old_cycles_wait_for_the_pacer() -> None:
    async def main() -> None:
        pacer = FullCollectionPacer(interval_s=3600)
        pacer.start(asyncio.get_running_loop())
        try:
            dead = _old_cycle()
            for _ in range(3):
                gc.collect(1)   # young collections leave the oldest generation alone
            assert dead() is not None
            pacer.collect_now()
            assert dead() is None and pacer.collections == 1
        finally:
            pacer.stop()

    asyncio.run(main())


def _middle_aged_cycle() -> weakref.ref:
    """A reference cycle that survived a young collection (now in the middle generation), then dropped."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gc.collect(0)
    return weakref.ref(a)


def _young_cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_young_cycles_are_still_freed_as_they_come_and_older_ones_wait_for_the_pacer() -> None:
    async def main() -> None:
        pacer = FullCollectionPacer(interval_s=3600)
        pacer.start(asyncio.get_running_loop())
        try:
            young, middle_aged = _young_cycle(), _middle_aged_cycle()
            # allocations enough for many automatic young collections, and for a middle one by CPython's rule
            kept = [[] for _ in range(20 * gc.get_threshold()[0] * 10)]
            assert young() is None                # freed by an automatic young collection
            assert middle_aged() is not None      # no automatic middle collection while the pacer runs
            del kept
            pacer.collect_now()
            assert middle_aged() is None
        finally:
            pacer.stop()

    asyncio.run(main())


def test_event_loop_run_paces_only_when_asked_and_restores_the_thresholds() -> None:
    before = gc.get_threshold()

    async def thresholds() -> tuple[int, int, int]:
        return gc.get_threshold()

    assert event_loop.run(thresholds()) == before
    assert min(event_loop.run(thresholds(), full_collection_interval_s=30.0)[1:]) >= 2**30
    assert gc.get_threshold() == before


@pytest.mark.parametrize("command", [master, agent], ids=["master", "agent"])
def test_a_negative_interval_is_refused(command) -> None:
    result = CliRunner().invoke(command, ["--full-collection-interval", "-1"])
    assert result.exit_code == 2
    assert "--full-collection-interval" in result.output and "-1" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
