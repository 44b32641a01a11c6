"""The event loop the master and agents run on: uvloop when it is installed, else asyncio's own.

Why: the master is one loop, and at scale most of its time per task is
socket writes, readiness polling and callbacks of the loop itself (see
docs/benchmarks.md, "Where the master's time goes"); uvloop does these in C.
Set SCYLLA_EVENT_LOOP=asyncio to run on asyncio's pure-Python loop instead
(the before/after measurement of the scale benchmark uses it). `run` can
also pace the garbage collector's full collections (collector_pacing.py).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

from .collector_pacing import FullCollectionPacer

T = TypeVar("T")
LOOP_ENV = "SCYLLA_EVENT_LOOP"


def loop_name() -> str:
    """'uvloop' or 'asyncio': the loop `run` will use here."""
    if os.environ.get(LOOP_ENV, "").strip().lower() == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def run(main: Coroutine[Any, Any, T], full_collection_interval_s: float | None = None) -> T:
    """asyncio.run(main) on the loop `loop_name()` names; with an interval, the garbage collector's full
    collections run every that many seconds instead of when CPython's survivor count says."""
    if full_collection_interval_s:
        main = _paced(main, FullCollectionPacer(full_collection_interval_s))
    if loop_name() == "uvloop":
        import uvloop
        return uvloop.run(main)
    return asyncio.run(main)


async def _paced(main: Coroutine[Any, Any, T], pacer: FullCollectionPacer) -> T:
    pacer.start(asyncio.get_running_loop())
    try:
        return await main
    finally:
        pacer.stop()
