"""Score plugins: rank the agents that can host a process (0-100, higher wins)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from scylla_singa.jobconf.plan import ProcessPlan
from scylla_singa.placement.snapshot import Cycle, demand_of
from .base import ScorePlugin


def _after_fraction(cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
    """Mean over cpus and mem of the fraction of each agent's offer left after placing `proc`."""
    d = demand_of(proc)
    cpu = (cycle.remaining_cpus() - d.cpus) * cycle.fleet.inv_cpus
    mem = (cycle.remaining_mem() - d.mem_mb) * cycle.fleet.inv_mem
    return np.clip((cpu + mem) / 2, 0.0, 1.0)


@dataclass(frozen=True)
class Spread(ScorePlugin):
    """Fewer processes of this job on the agent is better: as many distinct agents as possible."""

    name: ClassVar[str] = "spread"

    def score(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        return 100.0 / (1.0 + cycle.nprocs)


@dataclass(frozen=True)
class LeastAllocated(ScorePlugin):
    """More of the agent's offer left after placing is better (load balance)."""

    name: ClassVar[str] = "least-allocated"

    def score(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        return 100.0 * _after_fraction(cycle, proc)


@dataclass(frozen=True)
class Pack(ScorePlugin):
    """Bin-packing: agents already used by the job first, then the fullest (best fit)."""

    name: ClassVar[str] = "pack"

    def score(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        used_by_job = (cycle.nprocs > 0).astype(float)
        return 50.0 * used_by_job + 50.0 * (1.0 - _after_fraction(cycle, proc))


@dataclass(frozen=True)
class Affinity(ScorePlugin):
    """Share of the process's traffic that stays on the agent: co-locate heavy talkers."""

    name: ClassVar[str] = "affinity"

    def score(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        to_agents = cycle.bytes_to_agents(proc.id)
        total = sum(cycle.adjacency[proc.id].values())
        if total == 0:
            return np.zeros(cycle.size)
        return 100.0 * to_agents / total
