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

from ..jobconf.plan import ProcessPlan
from .snapshot import Cycle

Feasible = Callable[[Cycle, ProcessPlan], np.ndarray]
MAX_PASSES = 8
# Swaps look at pairs of processes: bounded so huge jobs stay fast.
SWAP_LIMIT = 128


def refine_cut(cycle: Cycle, feasible: Feasible) -> None:
    """Improve `cycle`'s assignment in place; each accepted step lowers the cut."""
    procs = sorted(cycle.plan.procs, key=lambda p: p.id)
    for _ in range(MAX_PASSES):
        improved = False
        for proc in procs:
            improved |= _try_move(cycle, proc, feasible)
        if len(procs) <= SWAP_LIMIT:
            by_id = {p.id: p for p in procs}
            for proc in procs:
                improved |= _try_swaps(cycle, proc, by_id, feasible)
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


def _local(cycle: Cycle, pid: int, agent: int, ignore: int) -> int:
    """Bytes from `pid` to peers (other than `ignore`) that are not on `agent`."""
    return sum(w for peer, w in cycle.adjacency[pid].items()
               if peer != ignore and cycle.assignment[peer] != agent)


def _try_swaps(cycle: Cycle, proc: ProcessPlan, by_id: dict[int, ProcessPlan], feasible: Feasible) -> bool:
    a = cycle.assignment[proc.id]
    to = cycle.bytes_to_agents(proc.id)
    for b in np.nonzero(to > to[a])[0]:
        b = int(b)
        for qid in [q for q, where in cycle.assignment.items() if where == b]:
            delta = (_local(cycle, proc.id, b, qid) + _local(cycle, qid, a, proc.id)
                     - _local(cycle, proc.id, a, qid) - _local(cycle, qid, b, proc.id))
            if delta < 0 and _swap(cycle, proc, by_id[qid], a, b, feasible):
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
