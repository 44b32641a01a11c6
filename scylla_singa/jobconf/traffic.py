"""Who talks to whom in a SINGA job, and how many bytes per training step.

The estimate follows SINGA v0's data flow: every worker pushes its gradients
to, and pulls fresh parameters from, the servers of its server group, each
server owning 1/nservers_per_group of the parameters; server groups exchange
their slices every sync_freq steps (Distributed Hogwild). Traffic between
threads of one process never crosses the network and is left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .processes import ClusterShape, ProcessSpec, server_group_of, server_process, worker_process


@dataclass(frozen=True)
class Edge:
    """Traffic between two processes (src < dst), both directions summed."""

    src: int
    dst: int
    bytes_per_step: int


def traffic_edges(shape: ClusterShape, param_bytes: int) -> tuple[Edge, ...]:
    """Cross-process edges with their estimated bytes per step, sorted by (src, dst)."""
    volume: defaultdict[tuple[int, int], float] = defaultdict(float)
    slice_bytes = param_bytes / shape.nservers_per_group
    for g in range(shape.nworker_groups):
        sg = server_group_of(shape, g)
        for j in range(shape.nworkers_per_group):
            wp = worker_process(shape, g, j)
            for s in range(shape.nservers_per_group):
                _add(volume, wp, server_process(shape, sg, s), 2 * slice_bytes)
    if shape.nserver_groups > 1:
        for s in range(shape.nservers_per_group):
            for a in range(shape.nserver_groups):
                for b in range(a + 1, shape.nserver_groups):
                    _add(volume, server_process(shape, a, s), server_process(shape, b, s),
                         2 * slice_bytes / shape.sync_freq)
    return tuple(Edge(a, b, round(v)) for (a, b), v in sorted(volume.items()) if round(v) > 0)


def _add(volume: defaultdict[tuple[int, int], float], p: int, q: int, amount: float) -> None:
    if p != q:
        volume[(min(p, q), max(p, q))] += amount


def process_traffic(procs: tuple[ProcessSpec, ...], edges: tuple[Edge, ...]) -> dict[int, int]:
    """Bytes per step each process sends and receives over the network."""
    total = {p.id: 0 for p in procs}
    for e in edges:
        total[e.src] += e.bytes_per_step
        total[e.dst] += e.bytes_per_step
    return total
