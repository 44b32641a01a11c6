"""The plugin interfaces: filters say who can host a process, scores rank them.

A plugin implements only the extension points it needs (Kubernetes
scheduling framework). Both kinds work on all agents at once: `feasible`
returns a boolean mask, `score` an array of 0-100. `explain` turns one
rejection into words, and is only called when a job cannot be placed, so
the hot path never formats strings. Plugins keep no state between calls;
per-cycle values go into `cycle.scratch`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from scylla_singa.jobconf.plan import ProcessPlan
from scylla_singa.placement.fit_status import OK, Status
from scylla_singa.placement.snapshot import Cycle


class FilterPlugin(ABC):
    name: ClassVar[str]
    # True when a rejection holds whatever is freed later (a constraint, not a shortage).
    unresolvable: ClassVar[bool] = False

    def pre_filter(self, cycle: Cycle) -> Status:
        """Per-job check before any agent is looked at; OK by default."""
        return OK

    @abstractmethod
    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        """Boolean mask over cycle.agents: may `proc` go there now?"""

    @abstractmethod
    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> str:
        """Why agent `i` cannot host `proc` (only called where feasible() is False)."""


class ScorePlugin(ABC):
    name: ClassVar[str]

    @abstractmethod
    def score(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        """Scores in [0, 100] over cycle.agents; higher is better."""
