"""Plugin registry: names in policy files -> plugin classes.

Plugins are looked up by name, arguments are the plugin dataclass's fields
(validated by `build`), and registering a name twice is an error, as in the
Kubernetes scheduler's registry.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from scylla_singa.placement.plugins.base import FilterPlugin, ScorePlugin
from scylla_singa.placement.plugins.filters import (AttributeConstraint, Bandwidth, HostnameConstraint,
                                                    MaxProcsPerAgent, ResourcesFit, Singa11Cpus)
from scylla_singa.placement.plugins.scores import Affinity, LeastAllocated, Pack, Spread

Plugin = FilterPlugin | ScorePlugin


class Registry:
    def __init__(self) -> None:
        self._plugins: dict[str, type[Plugin]] = {}

    def register(self, cls: type[Plugin]) -> None:
        if cls.name in self._plugins:
            raise ValueError(f"plugin {cls.name!r} is registered twice")
        self._plugins[cls.name] = cls

    def names(self) -> list[str]:
        return sorted(self._plugins)

    def kind(self, name: str) -> str | None:
        cls = self._plugins.get(name)
        if cls is None:
            return None
        return "filter" if issubclass(cls, FilterPlugin) else "score"

    def build(self, name: str, args: Mapping[str, Any]) -> Plugin:
        """An instance of plugin `name` with `args`; ValueError says what is wrong."""
        cls = self._plugins.get(name)
        if cls is None:
            raise ValueError(f"unknown plugin {name!r}; known: {', '.join(self.names())}")
        allowed = {f.name: f for f in dataclasses.fields(cls) if f.init}
        unknown = set(args) - set(allowed)
        if unknown:
            raise ValueError(f"plugin {name!r} has no argument {sorted(unknown)[0]!r}"
                             f"{'; it takes ' + ', '.join(sorted(allowed)) if allowed else '; it takes none'}")
        return cls(**{k: _coerce(name, k, v, allowed[k].type) for k, v in args.items()})


def _coerce(plugin: str, key: str, value: Any, annotation: Any) -> Any:
    text = str(annotation)
    if text.startswith("int"):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"plugin {plugin!r}: {key} must be a positive integer, got {value!r}")
        return value
    if text.startswith("tuple"):
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (str, int, float)) for v in items):
            raise ValueError(f"plugin {plugin!r}: {key} must be a list of names or patterns")
        return tuple(str(v) for v in items)
    if text.startswith("Mapping"):
        if not isinstance(value, dict):
            raise ValueError(f"plugin {plugin!r}: {key} must be a mapping of attribute -> value(s)")
        return {str(k): tuple(str(x) for x in (v if isinstance(v, list) else [v])) for k, v in value.items()}
    return value


DEFAULT_REGISTRY = Registry()
for _cls in (ResourcesFit, Singa11Cpus, MaxProcsPerAgent, AttributeConstraint, HostnameConstraint, Bandwidth,
             Spread, LeastAllocated, Pack, Affinity):
    DEFAULT_REGISTRY.register(_cls)
