"""Checks a plugin uses to turn its `args` from a policy file into its frozen dataclass's fields.

Each plugin validates its own arguments (its `from_args`), as a Kubernetes
scheduler plugin's factory does; these are the checks they share. Every
one raises ValueError with a message that names the plugin and the
argument and says what to write; the policy parser adds FILE:LINE:COL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def expect_only(plugin: str, args: Any, allowed: Iterable[str]) -> Mapping[str, Any]:
    """`args` as a mapping, if it names no argument but `allowed`."""
    allowed = sorted(allowed)
    takes = "; it takes " + ", ".join(allowed) if allowed else "; it takes none"
    if not isinstance(args, Mapping):
        raise ValueError(f"plugin {plugin!r}: args is a mapping of argument -> value{takes}")
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise ValueError(f"plugin {plugin!r} has no argument {unknown[0]!r}{takes}")
    return args


def positive_int(plugin: str, key: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"plugin {plugin!r}: {key} must be a positive integer, got {value!r}")
    return value


def names_or_patterns(plugin: str, key: str, value: Any) -> tuple[str, ...]:
    """A name or glob, or a list of them."""
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(v, (str, int, float)) for v in items):
        raise ValueError(f"plugin {plugin!r}: {key} must be a list of names or patterns")
    return tuple(str(v) for v in items)


def attribute_values(plugin: str, key: str, value: Any) -> dict[str, tuple[str, ...]]:
    """attribute -> a value (glob) or a list of them."""
    if not isinstance(value, dict):
        raise ValueError(f"plugin {plugin!r}: {key} must be a mapping of attribute -> value(s)")
    return {str(k): tuple(str(x) for x in (v if isinstance(v, list) else [v])) for k, v in value.items()}
