"""Durations as people write them on a command line: "30s", "500ms", "2m", "1.5h", "7d".

One parser for every flag that takes a time (the run options, the master's
and agent's flags, the cluster's): a number with an optional unit (seconds
without one); "none" or "" mean "no duration" where the caller allows it.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|secs|m|mins|h|hrs|d|days)?\s*$")
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "secs": 1.0, "m": 60.0, "mins": 60.0,
          "h": 3600.0, "hrs": 3600.0, "d": 86400.0, "days": 86400.0}


def parse_duration(text: str | float | int | None, *, allow_none: bool = False) -> float | None:
    """Seconds from "1s", "500ms", "2m", "1.5h", "3d" or a bare number of seconds.

    "none" (and None, and "") give None when `allow_none`; anything else
    unparsable raises ValueError naming the accepted forms.
    """
    if text is None or (isinstance(text, str) and text.strip().lower() in ("none", "")):
        if allow_none:
            return None
        raise ValueError("a duration is required (e.g. 1s, 500ms, 2m)")
    if isinstance(text, (int, float)):
        return float(text)
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"bad duration {text!r}: use a number with a unit, e.g. 1s, 500ms, 2m, 1h")
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]
