"""Small helpers over Mesos's JSON shapes, shared by the master and the agent."""

from __future__ import annotations

import uuid

VERSION = "1.11.0"  # the Mesos API version we answer at /version (pymesos enables >= 1.0 features)


def new_id(prefix: str = "") -> str:
    """A fresh unique id (UUID4 text), optionally prefixed."""
    return f"{prefix}{uuid.uuid4()}"


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
