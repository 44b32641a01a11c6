"""Placement invariants over random clusters and jobs (hypothesis, seeded by its database)."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.jobconf.processes import ClusterShape
from scylla_singa.placement.place import Placed, place
from scylla_singa.placement.policy import load_policy
from scylla_singa.placement.refine import SwapTable, refine_cut
from scylla_singa.placement.snapshot import Cycle
from .builders import agent, job

POLICIES = {name: load_policy(name) for name in ("spread", "pack", "singa11", "network")}


@st.composite
def shapes(draw) -> ClusterShape:
    nsg = draw(st.integers(1, 3))
    nwg = nsg * draw(st.integers(1, 3))
    return ClusterShape(nworker_groups=nwg, nserver_groups=nsg, nworkers_per_group=draw(st.integers(1, 3)),
                        nservers_per_group=draw(st.integers(1, 3)), server_worker_separate=draw(st.booleans()))


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 12))
    return [agent(i, cpus=draw(st.sampled_from([0.5, 1, 2, 4, 8])), mem=draw(st.sampled_from([256, 1024, 4096])))
            for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(shapes(), clusters(), st.sampled_from(sorted(POLICIES)), st.sampled_from([0.5, 1.0, 2.0]))
def test_no_agent_overcommitted_and_every_process_placed_once(shape, agents, policy_name, cpus) -> None:
    plan = job(shape, cpus=cpus, mem=256)
    result = place(plan, agents, POLICIES[policy_name])
    if not isinstance(result, Placed):
        return
    assert sorted(result.assignment) == [p.id for p in plan.procs]
    used_cpus: dict[str, float] = defaultdict(float)
    used_mem: dict[str, float] = defaultdict(float)
    for p in plan.procs:
        used_cpus[result.assignment[p.id]] += p.demand.cpus
        used_mem[result.assignment[p.id]] += p.demand.mem_mb
    by_id = {a.agent_id: a for a in agents}
    for a, c in used_cpus.items():
        assert c <= by_id[a].free.cpus + 1e-6 and used_mem[a] <= by_id[a].free.mem_mb + 1e-6


@settings(max_examples=200, deadline=None)
@given(shapes(), clusters(), st.sampled_from([0.5, 1.0, 2.0]))
def test_network_crosses_no_more_bytes_than_spread(shape, agents, cpus) -> None:
    plan = job(shape, cpus=cpus, mem=256)
    spread = place(plan, agents, POLICIES["spread"])
    network = place(plan, agents, POLICIES["network"])
    if isinstance(spread, Placed):
        assert isinstance(network, Placed)
        assert network.cross_bytes_per_step <= spread.cross_bytes_per_step


@settings(max_examples=100, deadline=None)
@given(shapes(), clusters())
def test_a_job_fits_whenever_one_agent_could_hold_it_all(shape, agents) -> None:
    plan = job(shape, cpus=0.5, mem=256)
    big = agent("big", cpus=0.5 * plan.nprocs, mem=256 * plan.nprocs)
    for name in ("spread", "pack", "network"):
        assert isinstance(place(plan, agents + [big], POLICIES[name]), Placed)


def _cut(plan, where: dict[int, int]) -> int:
    return sum(e.bytes_per_step for e in plan.edges if where[e.src] != where[e.dst])


@settings(max_examples=100, deadline=None)
@given(shapes(), st.integers(2, 5), st.randoms(use_true_random=False))
def test_swap_deltas_are_the_exact_change_in_crossing_bytes(shape, nagents, rnd) -> None:
    plan = job(shape)
    cycle = Cycle(plan, tuple(agent(i, cpus=64, mem=1 << 20) for i in range(nagents)))
    for proc in plan.procs:
        cycle.place(proc, rnd.randrange(nagents))
    table = SwapTable(cycle, list(plan.procs))
    before = _cut(plan, cycle.assignment)
    for proc in plan.procs:
        deltas = table.deltas(proc)
        for other in plan.procs:
            delta = deltas[cycle.graph.row[other.id]]
            a, b = cycle.assignment[proc.id], cycle.assignment[other.id]
            if a == b:
                assert delta == float("inf")
                continue
            swapped = {**cycle.assignment, proc.id: b, other.id: a}
            assert delta == _cut(plan, swapped) - before


@settings(max_examples=100, deadline=None)
@given(shapes(), st.integers(2, 5), st.randoms(use_true_random=False))
def test_refining_never_raises_the_cut_nor_overcommits(shape, nagents, rnd) -> None:
    plan = job(shape, cpus=1)
    cycle = Cycle(plan, tuple(agent(i, cpus=4, mem=1 << 20) for i in range(nagents)))
    for proc in plan.procs:
        fits = [i for i in range(nagents) if cycle.remaining_cpus()[i] >= 1]
        if not fits:
            return
        cycle.place(proc, rnd.choice(fits))
    before = _cut(plan, cycle.assignment)
    refine_cut(cycle, lambda c, p: c.remaining_cpus() >= p.demand.cpus)
    assert sorted(cycle.assignment) == sorted(p.id for p in plan.procs)
    assert _cut(plan, cycle.assignment) <= before
    assert (cycle.used_cpus <= 4).all()
