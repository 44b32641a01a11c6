"""Filter plugins: which agents can host a process now.

Ranks (their place in the pipeline): hostname and attribute constraints
first, then the process-count limit, SINGA-11's rule, resources, and the
bandwidth check last (see base.FilterPlugin.rank for why order matters).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Self

import numpy as np

from scylla_singa.jobconf.plan import ProcessPlan
from scylla_singa.placement.fit_status import OK, Reason, Status, unresolvable
from scylla_singa.placement.resource_vector import EPSILON, shortfall_reasons
from scylla_singa.placement.snapshot import AttrValue, Cycle, demand_of
from .base import FilterPlugin
from .plugin_args import attribute_values, expect_only, names_or_patterns, positive_int


@dataclass(frozen=True)
class ResourcesFit(FilterPlugin):
    """The agent's offered resources, minus this cycle's placements, cover the process."""

    name: ClassVar[str] = "resources-fit"
    rank: ClassVar[int] = 4

    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        d = demand_of(proc)
        return ((cycle.remaining_cpus() + EPSILON >= d.cpus) & (cycle.remaining_mem() + EPSILON >= d.mem_mb)
                & (cycle.remaining_gpus() + EPSILON >= d.gpus))

    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        return shortfall_reasons(cycle.remaining(i).shortfall(demand_of(proc)))


def singa11_process_cpus(cycle: Cycle) -> float:
    """SINGA-11's rule: CPUs for a whole process (workers + servers if separate, else the larger)."""
    s = cycle.plan.shape
    if s.server_worker_separate:
        return float(s.nworkers_per_procs + s.nservers_per_procs)
    return float(max(s.nworkers_per_procs, s.nservers_per_procs))


@dataclass(frozen=True)
class Singa11Cpus(FilterPlugin):
    """SINGA-11's offer rule: the agent's CPUs cover a whole SINGA process."""

    name: ClassVar[str] = "singa11-cpus"
    rank: ClassVar[int] = 3

    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        return cycle.remaining_cpus() + EPSILON >= singa11_process_cpus(cycle)

    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        need = singa11_process_cpus(cycle)
        return (Reason("insufficient cpus for a whole SINGA process",
                       f"need {need:g}, free {cycle.remaining_cpus()[i]:g}"),)


@dataclass(frozen=True)
class MaxProcsPerAgent(FilterPlugin):
    """At most `max` processes of the job on one agent."""

    name: ClassVar[str] = "max-procs-per-agent"
    rank: ClassVar[int] = 2
    constraint: ClassVar[str | None] = "max_procs_per_agent"
    max: int = 1

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Self:
        args = expect_only(cls.name, args, ("max",))
        return cls(positive_int(cls.name, "max", args["max"])) if "max" in args else cls()

    @classmethod
    def from_constraint(cls, value: Any) -> Self:
        """`max_procs_per_agent: N` is its `max`."""
        return cls.from_args({"max": value})

    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        return cycle.nprocs < self.max

    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        return (Reason(f"already hosts {cycle.nprocs[i]} process(es) of this job", f"max {self.max} per agent"),)


def _matches(value: AttrValue | None, wanted: tuple[str, ...]) -> bool:
    if value is None:
        return False
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return any(fnmatch.fnmatchcase(text, w) for w in wanted)


@dataclass(frozen=True)
class AttributeConstraint(FilterPlugin):
    """Agent attributes must match `match` and must not match `exclude` (values are globs)."""

    name: ClassVar[str] = "attributes"
    rank: ClassVar[int] = 1
    unresolvable: ClassVar[bool] = True
    constraint: ClassVar[str | None] = "attributes"
    match: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    exclude: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Self:
        args = expect_only(cls.name, args, ("match", "exclude"))
        return cls(**{k: attribute_values(cls.name, k, v) for k, v in args.items()})

    def _verdict(self, attrs: Mapping[str, AttrValue]) -> Reason | None:
        for key, wanted in self.match.items():
            if not _matches(attrs.get(key), wanted):
                return Reason(f"attribute {key}={attrs.get(key, '(unset)')} is not {' or '.join(wanted)}")
        for key, banned in self.exclude.items():
            if _matches(attrs.get(key), banned):
                return Reason(f"attribute {key}={attrs.get(key)} is excluded")
        return None

    def pre_filter(self, cycle: Cycle) -> Status:
        cycle.scratch[id(self)] = np.array([self._verdict(a.attributes) is None for a in cycle.agents], dtype=bool)
        return OK

    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        return cycle.scratch[id(self)]

    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        verdict = self._verdict(cycle.agents[i].attributes)
        return (verdict,) if verdict else ()


@dataclass(frozen=True)
class HostnameConstraint(FilterPlugin):
    """Agent hostnames must match one `include` glob (if any) and no `exclude` glob."""

    name: ClassVar[str] = "hostnames"
    rank: ClassVar[int] = 0
    unresolvable: ClassVar[bool] = True
    constraint: ClassVar[str | None] = "hostnames"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Self:
        args = expect_only(cls.name, args, ("include", "exclude"))
        return cls(**{k: names_or_patterns(cls.name, k, v) for k, v in args.items()})

    def _verdict(self, hostname: str) -> Reason | None:
        if self.include and not any(fnmatch.fnmatchcase(hostname, p) for p in self.include):
            return Reason(f"hostname {hostname} is not in {', '.join(self.include)}")
        if any(fnmatch.fnmatchcase(hostname, p) for p in self.exclude):
            return Reason(f"hostname {hostname} is excluded")
        return None

    def pre_filter(self, cycle: Cycle) -> Status:
        mask = np.array([self._verdict(a.hostname) is None for a in cycle.agents], dtype=bool)
        cycle.scratch[id(self)] = mask
        if cycle.size and not mask.any():
            return unresolvable(self.name, Reason("no agent's hostname passes the hostname constraints"))
        return OK

    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        return cycle.scratch[id(self)]

    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        verdict = self._verdict(cycle.agents[i].hostname)
        return (verdict,) if verdict else ()


@dataclass(frozen=True)
class Bandwidth(FilterPlugin):
    """Keeps every agent's estimated cross-agent traffic within its net_bw.

    Placing process p on agent a adds, on a, the traffic to p's placed peers
    elsewhere, and on each agent b hosting peers, the traffic to those peers.
    Agents without a known bandwidth are not limited.
    """

    name: ClassVar[str] = "bandwidth"
    rank: ClassVar[int] = 5

    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        if not cycle.bandwidth_limited:
            return np.ones(cycle.size, dtype=bool)
        to_agents = cycle.bytes_to_agents(proc.id)
        total = to_agents.sum()
        mbps = cycle.bytes_per_step_to_mbps
        mask = mbps(cycle.cross_bytes + (total - to_agents)) <= cycle.net_bw + EPSILON
        for b in np.nonzero(to_agents)[0]:
            if mbps(cycle.cross_bytes[b] + to_agents[b]) > cycle.net_bw[b] + EPSILON:
                only_b = np.zeros(cycle.size, dtype=bool)
                only_b[b] = True
                mask &= only_b
        return mask

    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        to_agents = cycle.bytes_to_agents(proc.id)
        own = cycle.bytes_per_step_to_mbps(cycle.cross_bytes[i] + to_agents.sum() - to_agents[i])
        if own > cycle.net_bw[i] + EPSILON:
            return (Reason("insufficient net_bw",
                           f"cross-agent traffic would be {own:.1f} Mbit/s, agent has {cycle.net_bw[i]:g}"),)
        return (Reason("insufficient net_bw on an agent hosting a peer process"),)


def short_resource(shortfalls: list[dict[str, tuple[float, float]]]) -> str | None:
    """The resource named most often in a list of shortfalls (for one-line summaries)."""
    counts: dict[str, int] = {}
    for short in shortfalls:
        for k in short:
            counts[k] = counts.get(k, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None


__all__ = ["ResourcesFit", "Singa11Cpus", "MaxProcsPerAgent", "AttributeConstraint", "HostnameConstraint",
           "Bandwidth", "short_resource"]
