"""Compare two JSON documents field by field: the same keys where one is written always, the same JSON types.

Why: our master and agent must answer with the shapes a real Mesos 1.12
writes (the recorded fixtures), whatever the values; clients decode by
field name and type (Go's encoding/json fails on a string where a number
was expected, mesos_exporter on an object where an array was).

Instances are grouped by path (list indexes collapsed to `[]`). At each path:
- every JSON type we write there, Mesos writes there too;
- every key we write in an object, Mesos writes there in some instance;
- every key Mesos writes in *every* instance, we write in every instance.
Paths listed in `free` are maps with free keys (flags, attributes, resource
dicts): only their value types are compared. A path absent on one side (no
completed task in one of the runs) is not compared.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def collect(value: Any, free: frozenset[str], path: str = "", acc: dict[str, list[Any]] | None = None
            ) -> dict[str, list[Any]]:
    acc = defaultdict(list) if acc is None else acc
    acc[path].append(value)
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}/*" if _matches(path, free) else f"{path}/{key}"
            collect(item, free, child, acc)
    elif isinstance(value, list):
        for item in value:
            collect(item, free, f"{path}[]", acc)
    return acc


def _matches(path: str, free: frozenset[str]) -> bool:
    """Whether `path` is a free map: listed whole, or by its last key (`*/resources`)."""
    last = path.rsplit("/", 1)[-1].removesuffix("[]")
    return path in free or f"*/{last}" in free


def shape_differences(ours: Any, mesos: Any, free: frozenset[str] = frozenset(),
                      allowed: dict[str, str] | None = None) -> list[str]:
    """What in `ours` differs in shape from `mesos` (empty when the shapes agree).

    `allowed` maps "path:key" (or "*/last:key", the path's last segment) to
    the reason a key may be missing or extra (documented differences); they
    are not reported.
    """
    allowed = allowed or {}
    a, b = collect(ours, free), collect(mesos, free)
    problems = []
    for path in sorted(set(a) & set(b)):
        ours_types = {json_type(v) for v in a[path]}
        mesos_types = {json_type(v) for v in b[path]}
        if not ours_types <= mesos_types:
            problems.append(f"{path or '/'}: we write {sorted(ours_types)}, Mesos {sorted(mesos_types)}")
        if _matches(path, free):
            continue
        ours_objects = [v for v in a[path] if isinstance(v, dict)]
        mesos_objects = [v for v in b[path] if isinstance(v, dict)]
        if not ours_objects or not mesos_objects:
            continue
        known = set().union(*(o.keys() for o in mesos_objects))
        always = set.intersection(*(set(o.keys()) for o in mesos_objects))
        last = path.rsplit("/", 1)[-1]
        excused = {k.rsplit(":", 1)[1] for k in allowed if k.rsplit(":", 1)[0] in (path, f"*/{last}")}
        for key in sorted(set().union(*(o.keys() for o in ours_objects)) - known - excused):
            problems.append(f"{path or '/'}: we write '{key}', Mesos never does")
        for key in sorted(always - excused):
            missing = sum(1 for o in ours_objects if key not in o)
            if missing:
                problems.append(f"{path or '/'}: Mesos always writes '{key}', we leave it out ({missing}x)")
    return problems
