"""Mesos offers (v1 JSON dicts) -> the AgentViews placement reads.

Several offers of one agent are summed: Mesos lets a framework accept them
together, and a gang may need all of an agent's resources.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from scylla_singa.placement.resource_vector import ResourceVector
from scylla_singa.placement.snapshot import AgentView

Offer = dict[str, Any]


def scalar(resources: Iterable[dict[str, Any]], name: str) -> float:
    """Sum of the scalar resources called `name`."""
    return sum(r.get("scalar", {}).get("value", 0.0) for r in resources
               if r.get("name") == name and r.get("type", "SCALAR") == "SCALAR")


def attributes(offer: Offer) -> dict[str, str | float]:
    """Text and scalar attributes of the offering agent; others as text."""
    out: dict[str, str | float] = {}
    for a in offer.get("attributes", []):
        kind = a.get("type")
        if kind == "SCALAR":
            out[a["name"]] = float(a["scalar"]["value"])
        elif kind == "TEXT":
            out[a["name"]] = a["text"]["value"]
        elif kind == "SET":
            out[a["name"]] = ",".join(a.get("set", {}).get("item", []))
        elif kind == "RANGES":
            out[a["name"]] = ",".join(f"{r['begin']}-{r['end']}" for r in a.get("ranges", {}).get("range", []))
    return out


def agent_views(offers: Iterable[Offer]) -> list[AgentView]:
    """One AgentView per agent, resources summed over its offers, in first-seen order."""
    grouped: dict[str, list[Offer]] = defaultdict(list)
    for offer in offers:
        grouped[offer["agent_id"]["value"]].append(offer)
    views = []
    for agent_id, group in grouped.items():
        resources = [r for o in group for r in o.get("resources", [])]
        attrs = attributes(group[0])
        bw = scalar(resources, "net_bw")
        net_bw = bw if any(r.get("name") == "net_bw" for r in resources) else _attr_bw(attrs)
        free = ResourceVector(scalar(resources, "cpus"), scalar(resources, "mem"), scalar(resources, "gpus"))
        views.append(AgentView(agent_id, group[0].get("hostname", agent_id), free, attrs, net_bw))
    return views


def _attr_bw(attrs: dict[str, str | float]) -> float | None:
    value = attrs.get("net_bw")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def role_of(offers: Iterable[Offer]) -> tuple[str, dict[str, Any] | None]:
    """The role the offers' resources are allocated to, and their allocation_info (if Mesos sent one)."""
    for offer in offers:
        for r in offer.get("resources", []):
            if r.get("name") == "cpus":
                return r.get("role", "*"), r.get("allocation_info")
    return "*", None
