"""Mesos's text form of resources, split into its parts: `cpus:4;mem:8192;ports:[31000-32000];ids:{a,b}`.

One splitter for every place that reads it (an agent's --resources, the
cluster's --resources/--node-resources, the embedded agent's): parts are
separated by ";", each is NAME:VALUE, or NAME(ROLE):VALUE for a resource
statically reserved for ROLE (`*`: none), as Mesos's agents read
`--resources`. What a value means (a number, [ranges], {a set}) and what a
role may be are the caller's business.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ITEM = re.compile(r"^\s*([A-Za-z0-9_.\-/]+)\s*(?:\(([^)]*)\))?\s*:\s*(.+?)\s*$")


class ResourceTextError(ValueError):
    """A part of resource text is not NAME:VALUE (or not a number where one is needed); says which part."""


class ResourceItem(NamedTuple):
    name: str
    value: str
    part: str                # the part as written, for error messages
    role: str | None = None  # NAME(ROLE): the role it is statically reserved for; None or "*": unreserved


def resource_items(text: str) -> list[ResourceItem]:
    """Each `;`-separated part of `text`, in order (empty parts skipped). Raises ResourceTextError."""
    items = []
    for part in filter(None, (p.strip() for p in (text or "").split(";"))):
        m = _ITEM.match(part)
        if not m:
            raise ResourceTextError(f"bad resource {part!r}: expected NAME:VALUE")
        role = m.group(2).strip() if m.group(2) is not None else None
        items.append(ResourceItem(m.group(1), m.group(3), part, None if role == "*" else role))
    return items


def scalar_resources(text: str) -> dict[str, float]:
    """The parts of `text` as numbers, summed by name. Raises ResourceTextError for a non-numeric part."""
    out: dict[str, float] = {}
    for item in resource_items(text):
        if item.role is not None:
            raise ResourceTextError(f"bad resource {item.part!r}: a role cannot be given here (these are "
                                    "unreserved amounts)")
        try:
            out[item.name] = out.get(item.name, 0.0) + float(item.value)
        except ValueError:
            raise ResourceTextError(f"bad resource {item.part!r}: {item.value!r} is not a number") from None
    return out
