"""Small helpers over Mesos's JSON shapes, shared by the master and the agent."""

from __future__ import annotations

import functools
import socket
import struct
import time
import uuid
from pathlib import Path
from typing import Any

from scylla_singa import __version__ as scylla_version

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


@functools.lru_cache(maxsize=64)
def ipv4_of(host: str) -> str:
    """The IPv4 address of `host` (itself when it is one), resolved once; "0.0.0.0" when it cannot be."""
    try:
        socket.inet_aton(host)
        return host
    except OSError:
        pass
    try:
        return socket.gethostbyname(host)
    except OSError:
        return "0.0.0.0"


def ipv4_as_uint32(ip: str) -> int:
    """An IPv4 address as Mesos writes MasterInfo.ip: its four bytes read as a little-endian uint32
    (127.0.0.1 -> 16777343, measured on Mesos 1.12)."""
    return struct.unpack("<I", socket.inet_aton(ip))[0]


def mesos_duration(seconds: float) -> str:
    """A duration as Mesos prints its flags: the largest unit it reaches ("15secs", "1.25mins", "2weeks")."""
    for unit, size in (("weeks", 604800.0), ("days", 86400.0), ("hrs", 3600.0), ("mins", 60.0), ("secs", 1.0),
                       ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= size:
            return f"{seconds / size:g}{unit}"
    return f"{seconds * 1e9:g}ns"


@functools.lru_cache(maxsize=1)
def build_info() -> dict[str, Any]:
    """The build fields Mesos writes in /version and /state, for this installation of scylla-singa.

    `version` is the Mesos API version we answer (VERSION); `build_time`
    and `build_date` are when this package was installed (its files' time);
    `build_user` is empty as in Mesos's release builds; scylla-singa is not
    built from a Mesos git tree, so `git_sha` and `git_branch` are empty
    and `git_tag` names the scylla-singa release.
    """
    built = Path(__file__).stat().st_mtime
    return {"build_date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(built)), "build_time": float(int(built)),
            "build_user": "", "git_branch": "", "git_sha": "", "git_tag": f"scylla-singa-{scylla_version}", "version": VERSION}
