"""Local search that lowers a placement's cross-agent traffic.

Greedy placement decides each process once; with tight agents it can strand
a heavy talker away from its peers. This pass (single moves, then pairwise
swaps, in the spirit of Kernighan-Lin) keeps applying changes that strictly
reduce the bytes crossing agents while every filter of the policy still
holds, so it never produces an infeasible placement and always terminates.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from scylla_singa.jobconf.plan import ProcessPlan
from .snapshot import Cycle

Feasible = Callable[[Cycle, ProcessPlan], np.ndarray]
MAX_PASSES = 8
# Swaps look at pairs of processes: bounded so huge jobs stay fast.
SWAP_LIMIT = 128


def refine_cut(cycle: Cycle, feasible: Feasible) -> None:
    """Improve `cycle`'s assignment in place; each accepted step lowers the cut."""
    procs = sorted(cycle.plan.procs, key=lambda p: p.id)
    swaps = SwapTable(cycle, procs) if len(procs) <= SWAP_LIMIT else None
    for _ in range(MAX_PASSES):
        improved = False
        for proc in procs:
            improved |= _try_move(cycle, proc, feasible)
        if swaps is not None:
            for proc in procs:
                improved |= swaps.try_swap(proc, feasible)
        if not improved:
            return


def _try_move(cycle: Cycle, proc: ProcessPlan, feasible: Feasible) -> bool:
    a = cycle.assignment[proc.id]
    to = cycle.bytes_to_agents(proc.id)
    gains = to - to[a]
    if not (gains > 0).any():
        return False
    cycle.unplace(proc)
    mask = feasible(cycle, proc) & (gains > 0)
    target = int(np.argmax(np.where(mask, gains, -np.inf))) if mask.any() else a
    cycle.place(proc, target)
    return target != a


class SwapTable:
    """The job's traffic as a dense matrix, so every candidate swap of a process is scored at once.

    Swapping p (on agent a) with q (on agent b) changes the bytes crossing
    agents by (to_p[a] - to_p[b]) + (to_q[b] - to_q[a]) + 2 w_pq, where
    to_x[k] is what x exchanges with the processes on agent k (to_p[b] and
    to_q[a] count the p-q edge, which crosses before and after the swap).
    One product of the traffic matrix with the processes' agent membership
    gives to_x[k] for every x and k. Only for jobs up to SWAP_LIMIT
    processes, so the matrix stays small.
    """

    def __init__(self, cycle: Cycle, procs: list[ProcessPlan]) -> None:
        self.cycle = cycle
        row = cycle.graph.row
        self.by_row = sorted(procs, key=lambda p: row[p.id])
        self.weights = np.zeros((len(procs), len(procs)))
        for e in cycle.plan.edges:
            self.weights[row[e.src], row[e.dst]] = self.weights[row[e.dst], row[e.src]] = e.bytes_per_step

    def deltas(self, proc: ProcessPlan) -> np.ndarray:
        """Per graph row q: the change in crossing bytes if `proc` and q swapped agents.

        Rows on `proc`'s own agent (and `proc` itself) get +inf: no swap.
        """
        cycle = self.cycle
        p = cycle.graph.row[proc.id]
        location = cycle.location
        rows = np.arange(len(location))
        membership = np.zeros((len(location), cycle.size))
        membership[rows, location] = 1.0
        to_agent = self.weights @ membership
        a = location[p]
        to_p = to_agent[p]
        delta = (to_p[a] - to_p[location]) + to_agent[rows, location] - to_agent[:, a] + 2 * self.weights[p]
        delta[location == a] = np.inf
        return delta

    def try_swap(self, proc: ProcessPlan, feasible: Feasible) -> bool:
        """Apply the best feasible swap of `proc` that lowers the cut; False when there is none."""
        cycle = self.cycle
        delta = self.deltas(proc)
        candidates = np.nonzero(delta < 0)[0]
        a = int(cycle.assignment[proc.id])
        for q in candidates[np.argsort(delta[candidates], kind="stable")]:
            if _swap(cycle, proc, self.by_row[q], a, int(cycle.location[q]), feasible):
                return True
        return False


def _swap(cycle: Cycle, p: ProcessPlan, q: ProcessPlan, a: int, b: int, feasible: Feasible) -> bool:
    cycle.unplace(p)
    cycle.unplace(q)
    if feasible(cycle, p)[b]:
        cycle.place(p, b)
        if feasible(cycle, q)[a]:
            cycle.place(q, a)
            return True
        cycle.unplace(p)
    cycle.place(p, a)
    cycle.place(q, b)
    return False
