"""Plugin registry: names in policy files -> plugin classes.

Plugins are looked up by name and configured by their own `from_args` (each
plugin validates its arguments into its frozen dataclass); registering a
name or a constraint key twice is an error, as in the Kubernetes
scheduler's registry.
"""

from __future__ import annotations

from typing import Any, Mapping

from scylla_singa.placement.plugins.base import FilterPlugin, ScorePlugin
from scylla_singa.placement.plugins.filters import (AttributeConstraint, Bandwidth, HostnameConstraint,
                                                    MaxProcsPerAgent, ResourcesFit, Singa11Cpus)
from scylla_singa.placement.plugins.scores import Affinity, LeastAllocated, Pack, Spread

Plugin = FilterPlugin | ScorePlugin


class Registry:
    def __init__(self) -> None:
        self._plugins: dict[str, type[Plugin]] = {}
        self._constraints: dict[str, type[FilterPlugin]] = {}

    def register(self, cls: type[Plugin]) -> None:
        if cls.name in self._plugins:
            raise ValueError(f"plugin {cls.name!r} is registered twice")
        key = getattr(cls, "constraint", None)
        if key is not None and key in self._constraints:
            raise ValueError(f"constraint {key!r} is registered twice")
        self._plugins[cls.name] = cls
        if key is not None:
            self._constraints[key] = cls

    def names(self) -> list[str]:
        return sorted(self._plugins)

    def constraints(self) -> list[str]:
        """The policy's `constraints:` keys, each configuring one filter."""
        return sorted(self._constraints)

    def kind(self, name: str) -> str | None:
        cls = self._plugins.get(name)
        if cls is None:
            return None
        return "filter" if issubclass(cls, FilterPlugin) else "score"

    def build(self, name: str, args: Mapping[str, Any]) -> Plugin:
        """An instance of plugin `name` configured by `args`; ValueError says what is wrong."""
        cls = self._plugins.get(name)
        if cls is None:
            raise ValueError(f"unknown plugin {name!r}; known: {', '.join(self.names())}")
        return cls.from_args(args)

    def build_constraint(self, key: str, value: Any) -> FilterPlugin:
        """The filter a `constraints:` entry configures; ValueError says what is wrong."""
        cls = self._constraints.get(key)
        if cls is None:
            raise ValueError(f"unknown constraint {key!r}; one of {', '.join(self.constraints())}")
        return cls.from_constraint(value)


DEFAULT_REGISTRY = Registry()
for _cls in (ResourcesFit, Singa11Cpus, MaxProcsPerAgent, AttributeConstraint, HostnameConstraint, Bandwidth,
             Spread, LeastAllocated, Pack, Affinity):
    DEFAULT_REGISTRY.register(_cls)
