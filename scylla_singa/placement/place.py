"""Placement as a pure function: (job plan, agents' offered resources, policy) -> Placement.

Greedy over the job's processes in the policy's order: filter every agent,
score the feasible ones, take the best (ties go to the earlier agent, so the
result is deterministic), record the choice in the cycle overlay, go on. The
whole gang is placed or nothing is: the first process that fits nowhere
ends the cycle with a NotPlaced value carrying every agent's reason. Nothing
here talks to Mesos; the framework's driver layer turns a Placed into
ACCEPT calls.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Mapping

import numpy as np

from scylla_singa.jobconf.plan import JobPlan, ProcessPlan
from scylla_singa.placement.plugins.base import FilterPlugin
from .fit_status import Code, Reason, Status
from .order import process_order
from .policy import Policy, Start
from .refine import refine_cut
from .snapshot import AgentView, Cycle, Fleet, TrafficGraph


@dataclass(frozen=True)
class Placed:
    """Every process has an agent."""

    assignment: Mapping[int, str]          # proc id -> agent id
    cross_mbps: Mapping[str, float]        # agent id -> estimated cross-agent Mbit/s
    proc_cross_mbps: Mapping[int, float]   # proc id -> its cross-agent Mbit/s
    cross_bytes_per_step: int              # total traffic between agents

    @property
    def agents_used(self) -> int:
        return len(set(self.assignment.values()))


@dataclass(frozen=True)
class NotPlaced:
    """The gang does not fit (now, or ever when code is UNRESOLVABLE).

    `status` carries one reason per kind of rejection, its detail the number
    of agents rejected for it; `per_agent` each agent's own reasons;
    `message` the sentence a waiting job shows (made from those, never parsed).
    """

    proc: int
    status: Status
    per_agent: Mapping[str, Status]
    placed_before: int
    message: str = ""

    @property
    def code(self) -> Code:
        return self.status.code

    def summary(self) -> str:
        return self.message or str(self.status)


Placement = Placed | NotPlaced


def place(plan: JobPlan, agents: tuple[AgentView, ...] | list[AgentView], policy: Policy) -> Placement:
    """Place every process of `plan` on `agents` by `policy`. Pure; deterministic.

    The policy's own greedy pass runs first; its `starts` run after it under
    the same filters. With `refine`, each result is improved by local
    search. The placement crossing the fewest bytes wins (then fewest
    agents, then the earlier pass); if no pass places the job, the own
    pass's NotPlaced explains why.
    """
    results: list[Placement] = []
    agents = tuple(agents)
    graph, fleet = TrafficGraph(plan), Fleet.of(agents)
    for start in (policy.own_start, *policy.starts):
        results.append(_greedy(plan, agents, policy, start, graph, fleet))
    placed = [r for r in results if isinstance(r, Placed)]
    if not placed:
        return results[0]
    return min(placed, key=lambda r: (r.cross_bytes_per_step, r.agents_used))


def _greedy(plan: JobPlan, agents: tuple[AgentView, ...], policy: Policy, start: Start,
            graph: TrafficGraph, fleet: Fleet) -> Placement:
    cycle = Cycle(plan, agents, graph, fleet)
    for f in policy.filters:
        status = f.pre_filter(cycle)
        if not status.ok:
            return NotPlaced(plan.procs[0].id if plan.procs else -1, status, {}, 0)
    feasible = partial(_feasible, filters=policy.filters)
    for count, proc in enumerate(process_order(plan, start.order)):
        mask = feasible(cycle, proc)
        if not mask.any():
            return _not_placed(cycle, proc, policy, count)
        cycle.place(proc, _best(cycle, proc, start, mask))
    if policy.refine:
        used = sorted(set(cycle.assignment.values()))
        sub, back = cycle.restricted(used)
        for f in policy.filters:
            f.pre_filter(sub)
        refine_cut(sub, feasible)
        by_id = {p.id: p for p in plan.procs}
        for pid in list(cycle.assignment):
            cycle.unplace(by_id[pid])
        for pid, k in sub.assignment.items():
            cycle.place(by_id[pid], back[k])
    return _placed(cycle)


def _feasible(cycle: Cycle, proc: ProcessPlan, filters: tuple[FilterPlugin, ...]) -> np.ndarray:
    mask = np.ones(cycle.size, dtype=bool)
    for f in filters:
        mask &= f.feasible(cycle, proc)
        if not mask.any():
            break
    return mask


def _best(cycle: Cycle, proc: ProcessPlan, start: Start, feasible: np.ndarray) -> int:
    total = np.zeros(cycle.size)
    for plugin, weight in start.scores:
        if weight:
            total += weight * np.clip(plugin.score(cycle, proc), 0.0, 100.0)
    total[~feasible] = -np.inf
    return int(np.argmax(total))


def _not_placed(cycle: Cycle, proc: ProcessPlan, policy: Policy, placed_before: int) -> NotPlaced:
    per_agent: dict[str, Status] = {}
    all_unresolvable = bool(cycle.size)
    for f in policy.filters:
        rejected = ~f.feasible(cycle, proc)
        for i in np.nonzero(rejected)[0]:
            agent = cycle.agents[i].agent_id
            if agent in per_agent:
                continue
            code = Code.UNRESOLVABLE if f.unresolvable else Code.UNSCHEDULABLE
            per_agent[agent] = Status(code, f.explain(cycle, proc, int(i)), f.name)
    all_unresolvable = all_unresolvable and all(s.code is Code.UNRESOLVABLE for s in per_agent.values())
    d = proc.demand
    need = f"{d.cpus:g} cpus, {d.mem_mb} MB" + (f", {d.gpus} gpus" if d.gpus else "")
    kinds = Counter(s.reasons[0].kind for s in per_agent.values() if s.reasons).most_common()
    detail = ", ".join(f"{n} {k}" for k, n in kinds)
    if not cycle.size:
        detail = "no agents are offering resources"
    message = (f"0/{cycle.size} agents can host process {proc.id} ({need})"
               f"{' after placing ' + str(placed_before) + ' of ' + str(cycle.plan.nprocs) if placed_before else ''}"
               f": {detail}")
    code = Code.UNRESOLVABLE if all_unresolvable else Code.UNSCHEDULABLE
    reasons = tuple(Reason(k, f"{n} agent{'s' if n > 1 else ''}") for k, n in kinds) \
        or (Reason("no agents are offering resources"),)
    return NotPlaced(proc.id, Status(code, reasons, "place"), per_agent, placed_before, message)


def _placed(cycle: Cycle) -> Placed:
    assignment = {pid: cycle.agents[i].agent_id for pid, i in cycle.assignment.items()}
    cross_agent = {cycle.agents[i].agent_id: float(cycle.bytes_per_step_to_mbps(cycle.cross_bytes[i]))
                   for i in set(cycle.assignment.values())}
    proc_cross = {}
    for pid, i in cycle.assignment.items():
        volume = sum(v for peer, v in cycle.adjacency[pid].items() if cycle.assignment[peer] != i)
        proc_cross[pid] = float(cycle.bytes_per_step_to_mbps(volume))
    total = sum(e.bytes_per_step for e in cycle.plan.edges
                if cycle.assignment[e.src] != cycle.assignment[e.dst])
    return Placed(assignment, cross_agent, proc_cross, total)
