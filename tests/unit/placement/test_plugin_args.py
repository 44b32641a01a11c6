"""Each plugin owns its arguments (validated into its frozen dataclass) and its place in the pipeline."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Self

import numpy as np
import pytest

from scylla_singa.placement.fit_status import Reason
from scylla_singa.placement.plugins.base import FilterPlugin
from scylla_singa.placement.plugins.filters import (AttributeConstraint, Bandwidth, HostnameConstraint,
                                                    MaxProcsPerAgent, ResourcesFit, Singa11Cpus)
from scylla_singa.placement.plugins.scores import Affinity, LeastAllocated, Pack, Spread
from scylla_singa.placement.policy import PolicyError, parse_policy
from scylla_singa.placement.registry import DEFAULT_REGISTRY, Registry


@pytest.mark.parametrize("cls, args, want", [
    (MaxProcsPerAgent, {}, MaxProcsPerAgent(1)),
    (MaxProcsPerAgent, {"max": 3}, MaxProcsPerAgent(3)),
    (HostnameConstraint, {"include": "node1"}, HostnameConstraint(include=("node1",))),
    (HostnameConstraint, {"include": ["node*", 7], "exclude": ["node3"]},
     HostnameConstraint(include=("node*", "7"), exclude=("node3",))),
    (AttributeConstraint, {"match": {"rack": "r1"}, "exclude": {"zone": ["a", "b"]}},
     AttributeConstraint(match={"rack": ("r1",)}, exclude={"zone": ("a", "b")})),
    (ResourcesFit, {}, ResourcesFit()),
    (Spread, {}, Spread()),
], ids=["max-default", "max", "one-hostname", "hostname-list", "attributes", "no-args-filter", "no-args-score"])
def test_a_plugin_turns_its_args_into_its_frozen_dataclass(cls, args, want) -> None:
    plugin = cls.from_args(args)
    assert plugin == want
    with pytest.raises(dataclasses.FrozenInstanceError):
        plugin.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize("cls, args, message", [
    (MaxProcsPerAgent, {"max": 0}, "plugin 'max-procs-per-agent': max must be a positive integer, got 0"),
    (MaxProcsPerAgent, {"max": True}, "max must be a positive integer, got True"),
    (MaxProcsPerAgent, {"most": 2}, "plugin 'max-procs-per-agent' has no argument 'most'; it takes max"),
    (HostnameConstraint, {"include": [{"a": 1}]}, "include must be a list of names or patterns"),
    (AttributeConstraint, {"match": ["rack"]}, "match must be a mapping of attribute -> value(s)"),
    (AttributeConstraint, {"matches": {}}, "has no argument 'matches'; it takes exclude, match"),
    (ResourcesFit, {"foo": 1}, "plugin 'resources-fit' has no argument 'foo'; it takes none"),
    (Pack, ["weight"], "plugin 'pack': args is a mapping of argument -> value; it takes none"),
], ids=["max-zero", "max-bool", "unknown-arg", "bad-pattern", "attributes-not-mapping", "unknown-attr-arg",
        "no-args-taken", "args-not-mapping"])
def test_a_plugin_refuses_bad_args_saying_what_to_write(cls, args, message) -> None:
    with pytest.raises(ValueError) as info:
        cls.from_args(args)
    assert message in str(info.value)


def test_bad_args_in_a_policy_file_keep_their_position() -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy("name: x\nfilters:\n  - resources-fit\n  - {name: hostnames, args: {include: [[a]]}}\n",
                     "p.yaml")
    assert str(info.value).startswith("p.yaml:4:29: plugin 'hostnames': include must be a list")


def test_a_constraint_key_is_the_filter_s_own() -> None:
    assert DEFAULT_REGISTRY.constraints() == ["attributes", "hostnames", "max_procs_per_agent"]
    assert MaxProcsPerAgent.from_constraint(2) == MaxProcsPerAgent(2)
    with pytest.raises(ValueError, match="hostnames takes a mapping"):
        HostnameConstraint.from_constraint(["node1"])


def test_filters_are_ordered_by_their_own_rank() -> None:
    ranks = {cls.name: cls.rank for cls in (HostnameConstraint, AttributeConstraint, MaxProcsPerAgent,
                                            Singa11Cpus, ResourcesFit, Bandwidth)}
    assert sorted(ranks, key=ranks.__getitem__) == ["hostnames", "attributes", "max-procs-per-agent",
                                                    "singa11-cpus", "resources-fit", "bandwidth"]
    policy = parse_policy("name: x\nfilters: [bandwidth, resources-fit, singa11-cpus]\n"
                          "constraints: {max_procs_per_agent: 1, attributes: {match: {a: b}}, hostnames: {}}\n")
    assert [f.name for f in policy.filters] == ["hostnames", "attributes", "max-procs-per-agent", "singa11-cpus",
                                                "resources-fit", "bandwidth"]


@dataclass(frozen=True)
class EvenAgentsOnly(FilterPlugin):
    """A plugin from outside the package: its own argument (a float in 0..1), its own rank."""

    name: ClassVar[str] = "even-agents"
    rank: ClassVar[int] = -1
    share: float = 0.5

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Self:
        share = args.get("share", 0.5)
        if not isinstance(share, float) or not 0 < share <= 1:
            raise ValueError(f"plugin {cls.name!r}: share is a fraction in (0, 1], got {share!r}")
        return cls(share)

    def feasible(self, cycle, proc) -> np.ndarray:
        return np.arange(cycle.size) % 2 == 0

    def explain(self, cycle, proc, i) -> tuple[Reason, ...]:
        return (Reason("odd agent"),)


def test_a_new_plugin_validates_its_own_args_and_takes_its_own_place() -> None:
    registry = Registry()
    for cls in (ResourcesFit, Spread, LeastAllocated, Affinity, EvenAgentsOnly):
        registry.register(cls)
    policy = parse_policy("name: x\nfilters: [resources-fit, {name: even-agents, args: {share: 0.25}}]\n",
                          registry=registry)
    assert policy.filters == (EvenAgentsOnly(0.25), ResourcesFit())
    with pytest.raises(PolicyError, match="share is a fraction in"):
        parse_policy("name: x\nfilters: [resources-fit, {name: even-agents, args: {share: 3}}]\n",
                     registry=registry)


def test_a_registry_refuses_a_constraint_key_twice() -> None:
    @dataclass(frozen=True)
    class OtherHostnames(HostnameConstraint):
        name: ClassVar[str] = "other-hostnames"

    registry = Registry()
    registry.register(HostnameConstraint)
    with pytest.raises(ValueError, match="constraint 'hostnames' is registered twice"):
        registry.register(OtherHostnames)
