"""A `docker exec -t` session's input stream, done in the order asked: a resize runs in the I/O pool, and
typing that follows it waits for it (the engine's resize is HTTP; without the wait a command could read its
line and then see the old size)."""

from __future__ import annotations

import asyncio
import threading

from scylla_singa.mesos.agent.nested_containers import InOrder


def test_typing_after_a_slow_resize_waits_for_it_and_typing_alone_is_immediate() -> None:
    async def run() -> list[str]:
        done: list[str] = []
        release = threading.Event()
        in_order = InOrder(asyncio.get_running_loop())
        in_order.do(lambda: done.append("typed-first"), in_pool=False)
        assert done == ["typed-first"]   # nothing pending: at once
        in_order.do(lambda: (release.wait(5), done.append("resize-0x0")), in_pool=True)
        in_order.do(lambda: done.append("resize-29x97"), in_pool=True)
        in_order.do(lambda: done.append("typed"), in_pool=False)
        await asyncio.sleep(0.05)
        assert done == ["typed-first"]   # all wait on the slow resize
        release.set()
        assert in_order.last is not None
        await asyncio.wait_for(in_order.last, 5)
        return done
    assert asyncio.run(run()) == ["typed-first", "resize-0x0", "resize-29x97", "typed"]
