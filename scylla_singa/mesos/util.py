"""Small helpers shared by the master and the agent: durations, ids, files."""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from pathlib import Path
from typing import Any

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|secs|m|mins|h|hrs|d|days)?\s*$")
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "secs": 1.0, "m": 60.0, "mins": 60.0,
          "h": 3600.0, "hrs": 3600.0, "d": 86400.0, "days": 86400.0}

VERSION = "1.11.0"  # the Mesos API version we answer at /version (pymesos enables >= 1.0 features)


def parse_duration(text: str | float | int | None, *, allow_none: bool = False) -> float | None:
    """Seconds from "1s", "500ms", "2m", "1.5h", "3d" or a bare number of seconds.

    "none" (and None) give None when `allow_none`; anything else unparsable
    raises ValueError naming the accepted forms.
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


def new_id(prefix: str = "") -> str:
    """A fresh unique id (UUID4 text), optionally prefixed."""
    return f"{prefix}{uuid.uuid4()}"


def atomic_write_json(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` atomically (temp file in the same dir, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path, default: Any = None) -> Any:
    """The JSON in `path`, or `default` when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return default


def value(obj: dict | None) -> str | None:
    """The `value` of a Mesos id object ({"value": ...}), or None."""
    if isinstance(obj, dict):
        v = obj.get("value")
        return v if isinstance(v, str) else None
    return None


def split_hostport(addr: str, default_port: int) -> tuple[str, int]:
    """("host", port) from "host:port" or "host"; raises ValueError on a bad port."""
    addr = addr.strip()
    if addr.startswith(("http://", "https://")):
        addr = addr.split("://", 1)[1]
    addr = addr.split("/", 1)[0]
    host, sep, port = addr.rpartition(":")
    if not sep:
        return addr, default_port
    return host, int(port)
