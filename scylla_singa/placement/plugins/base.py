"""The plugin interfaces: filters say who can host a process, scores rank them.

A plugin implements only the extension points it needs (Kubernetes
scheduling framework). Both kinds work on all agents at once: `feasible`
returns a boolean mask, `score` an array of 0-100. `explain` turns one
rejection into structured reasons (kind, detail), and is only called when a
job cannot be placed, so the hot path never formats strings. Plugins keep
no state between calls; per-cycle values go into `cycle.scratch`.

A plugin owns its arguments: `from_args` validates the policy file's `args`
into the plugin's frozen dataclass (plugin_args.py has the shared checks),
and a filter owns its place in the pipeline (`rank`). A filter that is
also a policy `constraints:` key names it in `constraint`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import numpy as np

from scylla_singa.jobconf.plan import ProcessPlan
from scylla_singa.placement.fit_status import OK, Reason, Status
from scylla_singa.placement.snapshot import Cycle
from .plugin_args import expect_only


class PlacementPlugin(ABC):
    name: ClassVar[str]

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> Self:
        """The plugin configured by `args` (from the policy YAML); ValueError says what is wrong.

        This default is for plugins without arguments; a plugin with some
        overrides it and checks each one.
        """
        expect_only(cls.name, args, ())
        return cls()


class FilterPlugin(PlacementPlugin):
    # Where the filter sits in the pipeline, lowest first. All filters run as vector operations, so
    # the order only decides which reason a rejected agent reports first: a constraint ("wrong
    # rack") explains more than the shortage it also has.
    rank: ClassVar[int] = 9
    # True when a rejection holds whatever is freed later (a constraint, not a shortage).
    unresolvable: ClassVar[bool] = False
    # The policy's `constraints:` key that configures this filter (None: only under `filters:`).
    constraint: ClassVar[str | None] = None

    @classmethod
    def from_constraint(cls, value: Any) -> Self:
        """The filter configured by its `constraints:` entry; by default the entry is its args."""
        if not isinstance(value, dict):
            raise ValueError(f"{cls.constraint} takes a mapping (e.g. match: {{rack: r1}} / include: [node1])")
        return cls.from_args(value)

    def pre_filter(self, cycle: Cycle) -> Status:
        """Per-job check before any agent is looked at; OK by default."""
        return OK

    @abstractmethod
    def feasible(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        """Boolean mask over cycle.agents: may `proc` go there now?"""

    @abstractmethod
    def explain(self, cycle: Cycle, proc: ProcessPlan, i: int) -> tuple[Reason, ...]:
        """Why agent `i` cannot host `proc` (only called where feasible() is False)."""


class ScorePlugin(PlacementPlugin):
    @abstractmethod
    def score(self, cycle: Cycle, proc: ProcessPlan) -> np.ndarray:
        """Scores in [0, 100] over cycle.agents; higher is better."""
