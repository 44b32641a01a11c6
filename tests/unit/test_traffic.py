"""The traffic estimate counts threads per process before pairing them: same edges as one pair per thread.

traffic.py aggregates workers and servers per process so planning stays
fast at job_limits.py's ceilings; this checks it against the plain definition
(every worker with every server of its group, every pair of server groups
per slice), written out here thread by thread, on every small shape.
"""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.jobconf.job_limits import JobLimits
from scylla_singa.jobconf.processes import ClusterShape, ProcessLayoutError, check_shape, server_group_of, \
    server_process, worker_process
from scylla_singa.jobconf.traffic import traffic_edges


def thread_by_thread(shape: ClusterShape, param_bytes: int) -> list[tuple[int, int, int]]:
    volume: defaultdict[tuple[int, int], float] = defaultdict(float)

    def add(p: int, q: int, amount: float) -> None:
        if p != q:
            volume[(min(p, q), max(p, q))] += amount

    slice_bytes = param_bytes / shape.nservers_per_group
    for g in range(shape.nworker_groups):
        for j in range(shape.nworkers_per_group):
            for s in range(shape.nservers_per_group):
                add(worker_process(shape, g, j), server_process(shape, server_group_of(shape, g), s), 2 * slice_bytes)
    for s in range(shape.nservers_per_group):
        for a in range(shape.nserver_groups):
            for b in range(a + 1, shape.nserver_groups):
                add(server_process(shape, a, s), server_process(shape, b, s), 2 * slice_bytes / shape.sync_freq)
    return [(a, b, round(v)) for (a, b), v in sorted(volume.items()) if round(v) > 0]


_SMALL = st.integers(1, 8)


@settings(max_examples=400, derandomize=True, database=None)
@given(_SMALL, _SMALL, _SMALL, _SMALL, _SMALL, _SMALL, st.booleans(), st.integers(1, 3),
       st.sampled_from((400, 4000, 123_457)))
def test_aggregated_edges_equal_the_thread_by_thread_definition(wg: int, sg: int, wpg: int, spg: int, wpp: int,
                                                               spp: int, separate: bool, sync: int,
                                                               param_bytes: int) -> None:
    shape = ClusterShape(wg, sg, wpg, spg, wpp, spp, separate, sync)
    try:
        check_shape(shape)
    except ProcessLayoutError:
        return
    got = [(e.src, e.dst, e.bytes_per_step) for e in traffic_edges(shape, param_bytes)]
    assert got == thread_by_thread(shape, param_bytes)


def test_the_densest_shape_within_the_default_ceilings_is_estimated_edge_by_edge() -> None:
    """Every worker process talks to every server process: (512/2)**2 edges when separate, 512**2/2 when not.
    How long it takes is a benchmark's question, not a test's (a CPU-time bound failed on a slower CI VM)."""
    n = JobLimits().max_processes
    for shape in (ClusterShape(nworkers_per_group=n, nservers_per_group=n),
                  ClusterShape(nworkers_per_group=n // 2, nservers_per_group=n // 2, server_worker_separate=True),
                  ClusterShape(nworker_groups=n, nserver_groups=n)):
        edges = traffic_edges(shape, 4000)
        assert len(edges) in (n * (n - 1) // 2, (n // 2) ** 2)
        assert len({(e.src, e.dst) for e in edges}) == len(edges)   # one edge per pair of processes
