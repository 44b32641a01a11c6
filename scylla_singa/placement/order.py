"""The order in which a job's processes are placed.

Greedy placement is sensitive to order: bin-packing does best largest-first;
the network policy places heavily communicating processes one after another
so each lands beside the peers it talks to most.
"""

from __future__ import annotations

from scylla_singa.jobconf.plan import JobPlan, ProcessPlan

ORDERS = ("id", "largest-first", "affinity")


def process_order(plan: JobPlan, order: str) -> list[ProcessPlan]:
    if order == "id":
        return list(plan.procs)
    if order == "largest-first":
        return sorted(plan.procs, key=lambda p: (-p.demand.cpus, -p.demand.mem_mb, -p.demand.gpus, p.id))
    if order == "affinity":
        return _affinity_order(plan)
    raise ValueError(f"unknown process order {order!r}; one of {', '.join(ORDERS)}")


def _affinity_order(plan: JobPlan) -> list[ProcessPlan]:
    """Heaviest talker first, then repeatedly the process with most traffic to those already ordered."""
    weight: dict[int, dict[int, int]] = {p.id: {} for p in plan.procs}
    for e in plan.edges:
        weight[e.src][e.dst] = e.bytes_per_step
        weight[e.dst][e.src] = e.bytes_per_step
    degree = {pid: sum(w.values()) for pid, w in weight.items()}
    by_id = {p.id: p for p in plan.procs}
    pull = {pid: 0 for pid in by_id}
    ordered: list[ProcessPlan] = []
    while pull:
        nxt = max(pull, key=lambda pid: (pull[pid], degree[pid], -pid))
        del pull[nxt]
        ordered.append(by_id[nxt])
        for peer, w in weight[nxt].items():
            if peer in pull:
                pull[peer] += w
    return ordered
