"""What placement sees: agents with their offered resources, and the cycle's scratchpad.

AgentView is built by the framework's driver layer from the offers it holds
(all offers of one agent summed). Cycle is the per-cycle scratchpad of the
Kubernetes scheduling framework combined with Nomad's proposed-allocation
overlay: placements made earlier in the same cycle are recorded here, never
in the snapshot, so plugins stay pure. Per-agent quantities are numpy arrays
indexed like `agents`, so a filter or score runs over 10,000 agents in one
vector operation.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from scylla_singa.jobconf.plan import JobPlan, ProcessPlan
from .resource_vector import ResourceVector

AttrValue = str | float


@dataclass(frozen=True)
class AgentView:
    """One agent as the offers show it."""

    agent_id: str
    hostname: str
    free: ResourceVector
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)
    # Network capacity in Mbit/s: the `net_bw` scalar resource offered, else
    # a `net_bw` attribute, else None (not limited).
    net_bw_mbps: float | None = None


def demand_of(proc: ProcessPlan) -> ResourceVector:
    return ResourceVector(proc.demand.cpus, float(proc.demand.mem_mb), float(proc.demand.gpus))


@dataclass(frozen=True)
class Fleet:
    """The agents' offered resources as arrays, built once per placement and shared by its cycles.

    `inv_cpus` and `inv_mem` are 1/free (0 where nothing is free), so
    scores get "fraction left" with a multiplication instead of a guarded
    division over every agent for every process.
    """

    cpus: np.ndarray
    mem: np.ndarray
    gpus: np.ndarray
    net_bw: np.ndarray
    inv_cpus: np.ndarray
    inv_mem: np.ndarray

    @classmethod
    def of(cls, agents: tuple[AgentView, ...]) -> "Fleet":
        cpus = np.fromiter((a.free.cpus for a in agents), dtype=float, count=len(agents))
        mem = np.fromiter((a.free.mem_mb for a in agents), dtype=float, count=len(agents))
        gpus = np.fromiter((a.free.gpus for a in agents), dtype=float, count=len(agents))
        net_bw = np.fromiter((np.inf if a.net_bw_mbps is None else a.net_bw_mbps for a in agents), dtype=float,
                             count=len(agents))
        return cls(cpus, mem, gpus, net_bw, _inverse(cpus), _inverse(mem))

    def subset(self, indices: list[int]) -> "Fleet":
        return Fleet(*(arr[indices] for arr in (self.cpus, self.mem, self.gpus, self.net_bw, self.inv_cpus,
                                                self.inv_mem)))


def _inverse(values: np.ndarray) -> np.ndarray:
    out = np.zeros_like(values)
    np.divide(1.0, values, out=out, where=values > 0)
    return out


class TrafficGraph:
    """The job's communication graph, built once per placement and shared by its cycles.

    `adjacency` is the readable form (proc id -> peer id -> bytes per step);
    `peers_of` gives the same as arrays of graph rows and volumes, so the
    traffic from one process to every agent is one bincount, not a Python
    loop over its peers (an AllReduce process talks to all the others).
    """

    def __init__(self, plan: JobPlan) -> None:
        self.row = {p.id: k for k, p in enumerate(plan.procs)}
        self.adjacency: dict[int, dict[int, int]] = {p.id: {} for p in plan.procs}
        for e in plan.edges:
            self.adjacency[e.src][e.dst] = e.bytes_per_step
            self.adjacency[e.dst][e.src] = e.bytes_per_step
        self._peers = {pid: (np.fromiter((self.row[q] for q in peers), dtype=np.int64, count=len(peers)),
                             np.fromiter(peers.values(), dtype=float, count=len(peers)))
                       for pid, peers in self.adjacency.items()}

    def peers_of(self, proc_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Graph rows of `proc_id`'s peers and the bytes per step exchanged with each."""
        return self._peers[proc_id]


class Cycle:
    """Tentative placements of one placement cycle, read by plugins.

    Only `place` mutates it; plugins read the arrays and may cache
    per-cycle values in `scratch` under their own name.
    """

    def __init__(self, plan: JobPlan, agents: tuple[AgentView, ...], graph: "TrafficGraph | None" = None,
                 fleet: "Fleet | None" = None) -> None:
        self.plan = plan
        self.agents = agents
        n = len(agents)
        fleet = fleet or Fleet.of(agents)
        self.fleet = fleet
        self.free_cpus, self.free_mem, self.free_gpus = fleet.cpus, fleet.mem, fleet.gpus
        self.net_bw = fleet.net_bw
        self.bandwidth_limited = bool(np.isfinite(self.net_bw).any())
        self.used_cpus = np.zeros(n)
        self.used_mem = np.zeros(n)
        self.used_gpus = np.zeros(n)
        self.nprocs = np.zeros(n, dtype=int)
        self.cross_bytes = np.zeros(n)
        self.assignment: dict[int, int] = {}  # proc id -> agent index
        self.graph = graph or TrafficGraph(plan)
        self.adjacency = self.graph.adjacency
        # Agent index of each process by its graph row; -1 while unplaced.
        self.location = np.full(len(plan.procs), -1, dtype=np.int64)
        self.scratch: dict[str, Any] = {}

    def restricted(self, indices: list[int]) -> tuple["Cycle", list[int]]:
        """A cycle over only the agents at `indices`, with this cycle's placements replayed.

        Returns it with the map from its agent indices back to ours. Local
        search only ever moves a process next to its peers, i.e. onto agents
        already in use, so it can run on this much smaller cycle.
        """
        sub = Cycle(self.plan, tuple(self.agents[i] for i in indices), self.graph, self.fleet.subset(indices))
        back = {i: k for k, i in enumerate(indices)}
        by_id = {p.id: p for p in self.plan.procs}
        for pid, i in self.assignment.items():
            sub.place(by_id[pid], back[i])
        return sub, list(indices)

    @functools.cached_property
    def index(self) -> dict[str, int]:
        """Agent id -> index (built on first use: most cycles never need it)."""
        return {a.agent_id: i for i, a in enumerate(self.agents)}

    @property
    def size(self) -> int:
        return len(self.agents)

    def remaining_cpus(self) -> np.ndarray:
        return self.free_cpus - self.used_cpus

    def remaining_mem(self) -> np.ndarray:
        return self.free_mem - self.used_mem

    def remaining_gpus(self) -> np.ndarray:
        return self.free_gpus - self.used_gpus

    def remaining(self, i: int) -> ResourceVector:
        return ResourceVector(self.free_cpus[i] - self.used_cpus[i], self.free_mem[i] - self.used_mem[i],
                              self.free_gpus[i] - self.used_gpus[i])

    def bytes_to_agents(self, proc_id: int) -> np.ndarray:
        """Per agent: bytes per step between `proc_id` and the processes already there."""
        peers, volumes = self.graph.peers_of(proc_id)
        where = self.location[peers]
        placed = where >= 0
        return np.bincount(where[placed], weights=volumes[placed], minlength=self.size).astype(float)

    def bytes_to_placed(self, proc_id: int) -> int:
        return sum(v for peer, v in self.adjacency[proc_id].items() if peer in self.assignment)

    def bytes_per_step_to_mbps(self, volume: np.ndarray | float) -> np.ndarray | float:
        return volume * 8 * self.plan.options.steps_per_s / 1e6

    def place(self, proc: ProcessPlan, i: int) -> None:
        """Record `proc` on agent index `i`, updating resources and cross-agent traffic."""
        self._account(proc, i, +1)
        self.assignment[proc.id] = i
        self.location[self.graph.row[proc.id]] = i

    def unplace(self, proc: ProcessPlan) -> int:
        """Undo `place` for `proc`; returns the agent index it was on."""
        i = self.assignment.pop(proc.id)
        self.location[self.graph.row[proc.id]] = -1
        self._account(proc, i, -1)
        return i

    def _account(self, proc: ProcessPlan, i: int, sign: int) -> None:
        crossing = self.bytes_to_agents(proc.id)
        crossing[i] = 0.0
        self.cross_bytes += sign * crossing
        self.cross_bytes[i] += sign * crossing.sum()
        d = demand_of(proc)
        self.used_cpus[i] += sign * d.cpus
        self.used_mem[i] += sign * d.mem_mb
        self.used_gpus[i] += sign * d.gpus
        self.nprocs[i] += sign
