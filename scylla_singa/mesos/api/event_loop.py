"""The event loop the master and agents run on: uvloop when it is installed, else asyncio's own.

Why: the master is one loop, and at scale most of its time per task is
socket writes, readiness polling and callbacks of the loop itself (see
docs/benchmarks.md, "Where the master's time goes"); uvloop does these in C.
Set SCYLLA_EVENT_LOOP=asyncio to run on asyncio's pure-Python loop instead
(the before/after measurement of the scale benchmark uses it).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar

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


def run(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main) on the loop `loop_name()` names."""
    if loop_name() == "uvloop":
        import uvloop
        return uvloop.run(main)
    return asyncio.run(main)
