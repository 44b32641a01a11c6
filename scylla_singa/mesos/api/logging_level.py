"""GET_LOGGING_LEVEL and SET_LOGGING_LEVEL, the same on the master and the agent: Mesos's glog verbosity
mapped onto the package's logger (0: INFO and above, 1 or more: DEBUG), a raised level lasting the call's
duration."""

from __future__ import annotations

import asyncio
import logging
from typing import Any


def logging_level() -> int:
    """The verbosity GET_LOGGING_LEVEL reports: 0 at INFO and above, 1 at DEBUG (glog's VLOG levels)."""
    return 1 if logging.getLogger("scylla_singa").getEffectiveLevel() <= logging.DEBUG else 0


def set_logging_level(level: int, duration_s: float, loop: asyncio.AbstractEventLoop | None) -> None:
    """SET_LOGGING_LEVEL: verbosity >= 1 logs DEBUG for `duration_s`, then the former level comes back."""
    logger = logging.getLogger("scylla_singa")
    former = logger.level
    logger.setLevel(logging.DEBUG if level >= 1 else logging.INFO)
    if loop is not None:
        loop.call_later(max(0.0, duration_s), logger.setLevel, former)


def apply_call(body: dict[str, Any], loop: asyncio.AbstractEventLoop | None) -> None:
    """A SET_LOGGING_LEVEL call's body (validated: level and duration present)."""
    set_logging_level(int(body.get("level", 0)), float(body["duration"]["nanoseconds"]) / 1e9, loop)
