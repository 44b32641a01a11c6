"""SINGA's process model: the four classic frameworks, edge cases, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.jobconf.processes import ClusterShape, ProcessLayoutError, process_table, server_group_of


def table(**kw) -> list[tuple[list, list]]:
    return [(list(p.workers), list(p.servers)) for p in process_table(ClusterShape(**kw))]


@pytest.mark.parametrize("shape, expected", [
    pytest.param(dict(nworkers_per_group=3, nservers_per_group=2, server_worker_separate=True),
                 [([(0, 0)], []), ([(0, 1)], []), ([(0, 2)], []), ([], [(0, 0)]), ([], [(0, 1)])],
                 id="sandblaster"),
    pytest.param(dict(nworkers_per_group=3, nservers_per_group=3),
                 [([(0, 0)], [(0, 0)]), ([(0, 1)], [(0, 1)]), ([(0, 2)], [(0, 2)])],
                 id="allreduce"),
    pytest.param(dict(nworker_groups=2, nworkers_per_group=2, nservers_per_group=2, server_worker_separate=True),
                 [([(0, 0)], []), ([(0, 1)], []), ([(1, 0)], []), ([(1, 1)], []), ([], [(0, 0)]), ([], [(0, 1)])],
                 id="downpour"),
    pytest.param(dict(nworker_groups=3, nserver_groups=3),
                 [([(0, 0)], [(0, 0)]), ([(1, 0)], [(1, 0)]), ([(2, 0)], [(2, 0)])],
                 id="distributed-hogwild"),
    pytest.param(dict(nworker_groups=2, nworkers_per_group=2, nworkers_per_procs=2),
                 [([(0, 0), (0, 1)], [(0, 0)]), ([(1, 0), (1, 1)], [])],
                 id="two-workers-per-process"),
    pytest.param(dict(nworker_groups=2, nworkers_per_group=1, nworkers_per_procs=2),
                 [([(0, 0), (1, 0)], [(0, 0)])],
                 id="groups-sharing-a-process"),
    pytest.param(dict(nworkers_per_group=1, nservers_per_group=4, nservers_per_procs=2),
                 [([(0, 0)], [(0, 0), (0, 1)]), ([], [(0, 2), (0, 3)])],
                 id="servers-outnumber-workers"),
    pytest.param(dict(nworkers_per_group=4, nworkers_per_procs=2, nservers_per_group=2, server_worker_separate=True),
                 [([(0, 0), (0, 1)], []), ([(0, 2), (0, 3)], []), ([], [(0, 0)]), ([], [(0, 1)])],
                 id="separate-with-packed-workers"),
])
def test_process_tables(shape: dict, expected: list) -> None:
    assert table(**shape) == expected


@pytest.mark.parametrize("shape, field", [
    pytest.param(dict(nworkers_per_group=3, nworkers_per_procs=2), "nworkers_per_procs", id="workers-inexact"),
    pytest.param(dict(nservers_per_group=3, nservers_per_procs=2), "nservers_per_procs", id="servers-inexact"),
    pytest.param(dict(nworker_groups=3, nserver_groups=2), "nserver_groups", id="server-groups-inexact"),
    pytest.param(dict(nworker_groups=1, nserver_groups=2), "nserver_groups", id="more-server-than-worker-groups"),
    pytest.param(dict(nworkers_per_group=0), "nworkers_per_group", id="zero"),
    pytest.param(dict(start_port=70000), "start_port", id="port"),
])
def test_layout_errors_name_the_field(shape: dict, field: str) -> None:
    with pytest.raises(ProcessLayoutError) as info:
        process_table(ClusterShape(**shape))
    assert info.value.field == field
    assert field in str(info.value)


def test_worker_groups_map_to_server_groups() -> None:
    shape = ClusterShape(nworker_groups=6, nserver_groups=2)
    assert [server_group_of(shape, g) for g in range(6)] == [0, 0, 0, 1, 1, 1]


@st.composite
def valid_shapes(draw) -> ClusterShape:
    nsg = draw(st.integers(1, 4))
    nwg = nsg * draw(st.integers(1, 3))
    wpg, spg = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    wpp = draw(st.sampled_from([d for d in range(1, nwg * wpg + 1) if (nwg * wpg) % d == 0]))
    spp = draw(st.sampled_from([d for d in range(1, nsg * spg + 1) if (nsg * spg) % d == 0]))
    return ClusterShape(nwg, nsg, wpg, spg, wpp, spp, draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(valid_shapes())
def test_every_worker_and_server_lands_in_exactly_one_process(shape: ClusterShape) -> None:
    procs = process_table(shape)
    assert [p.id for p in procs] == list(range(shape.nprocs))
    workers = [w for p in procs for w in p.workers]
    servers = [s for p in procs for s in p.servers]
    assert sorted(workers) == [(g, j) for g in range(shape.nworker_groups) for j in range(shape.nworkers_per_group)]
    assert sorted(servers) == [(g, j) for g in range(shape.nserver_groups) for j in range(shape.nservers_per_group)]
    assert all(p.workers or p.servers for p in procs)
    if shape.server_worker_separate:
        assert not any(p.workers and p.servers for p in procs)
    assert all(len(p.workers) <= shape.nworkers_per_procs and len(p.servers) <= shape.nservers_per_procs
               for p in procs)
