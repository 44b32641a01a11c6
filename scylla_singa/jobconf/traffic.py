"""Who talks to whom in a SINGA job, and how many bytes per training step.

The estimate follows SINGA v0's data flow: every worker pushes its gradients
to, and pulls fresh parameters from, the servers of its server group, each
server owning 1/nservers_per_group of the parameters; server groups exchange
their slices every sync_freq steps (Distributed Hogwild). Traffic between
threads of one process never crosses the network and is left out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from .processes import ClusterShape, ProcessSpec, server_group_of, server_process


@dataclass(frozen=True)
class Edge:
    """Traffic between two processes (src < dst), both directions summed."""

    src: int
    dst: int
    bytes_per_step: int


def traffic_edges(shape: ClusterShape, param_bytes: int) -> tuple[Edge, ...]:
    """Cross-process edges with their estimated bytes per step, sorted by (src, dst).

    Threads are counted per process before pairs are formed, so the work
    grows with the pairs of processes that talk, not with workers times
    servers (a job within job_limits.py's ceilings plans in well under a second).
    """
    volume: defaultdict[tuple[int, int], float] = defaultdict(float)
    slice_bytes = param_bytes / shape.nservers_per_group
    servers_at = [_server_blocks(shape, sg) for sg in range(shape.nserver_groups)]
    for (wp, sg), n_workers in _worker_counts(shape).items():
        for sp, n_servers in servers_at[sg]:
            _add(volume, wp, sp, 2 * slice_bytes * n_workers * n_servers)
    if shape.nserver_groups > 1:
        for procs, times in _sync_sets(shape).items():
            amount = 2 * slice_bytes / shape.sync_freq * times
            for i, (p, n_p) in enumerate(procs):
                for q, n_q in procs[i + 1:]:
                    _add(volume, p, q, amount * n_p * n_q)
    return tuple(Edge(a, b, round(v)) for (a, b), v in sorted(volume.items()) if round(v) > 0)


def _blocks(first: int, count: int, per_process: int) -> Iterator[tuple[int, int]]:
    """(process, how many) for the ids first..first+count-1 when each process holds `per_process` in a row."""
    i, end = first, first + count
    while i < end:
        process = i // per_process
        upto = min(end, (process + 1) * per_process)
        yield process, upto - i
        i = upto


def _worker_counts(shape: ClusterShape) -> dict[tuple[int, int], int]:
    """(worker process, server group it trains against) -> how many of that process's workers do."""
    counts: defaultdict[tuple[int, int], int] = defaultdict(int)
    for g in range(shape.nworker_groups):
        sg = server_group_of(shape, g)
        for process, n in _blocks(g * shape.nworkers_per_group, shape.nworkers_per_group, shape.nworkers_per_procs):
            counts[(process, sg)] += n
    return counts


def _server_blocks(shape: ClusterShape, group: int) -> list[tuple[int, int]]:
    """(server process, how many servers of `group` it holds)."""
    offset = shape.nworker_procs if shape.server_worker_separate else 0  # past the worker processes
    return [(process + offset, n) for process, n in
            _blocks(group * shape.nservers_per_group, shape.nservers_per_group, shape.nservers_per_procs)]


def _sync_sets(shape: ClusterShape) -> Counter[tuple[tuple[int, int], ...]]:
    """For each server index s, the processes holding server s of each group (with how many groups each),
    counted: server groups sync slice s among these processes, and many s share the same processes."""
    sets: Counter[tuple[tuple[int, int], ...]] = Counter()
    for s in range(shape.nservers_per_group):
        holders = Counter(server_process(shape, a, s) for a in range(shape.nserver_groups))
        sets[tuple(sorted(holders.items()))] += 1
    return sets


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
