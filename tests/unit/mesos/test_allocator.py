"""The allocation module alone: DRF order, filters, suppress/revive, roles, FIFO; invariants by Hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api.resources import Resources
from scylla_singa.mesos.master.allocator import HierarchicalAllocator, make_allocator
from scylla_singa.mesos.master.sorter import DRFSorter, FIFOSorter

R = Resources.parse


def _run_paper_example(kind: str) -> dict[str, int]:
    """One agent <9 CPU, 18 GB>; A's tasks <1, 4 GB>, B's <3, 1 GB>; one task per offer, leftovers declined."""
    a = make_allocator(kind, seed=1)
    a.add_agent("s1", R("cpus:9;mem:18432"))
    a.add_framework("A")
    a.add_framework("B")
    need = {"A": R("cpus:1;mem:4096"), "B": R("cpus:3;mem:1024")}
    count = {"A": 0, "B": 0}
    for now in range(50):
        grants = a.allocate(float(now))
        if not grants:
            break
        (g,) = grants
        if g.resources.contains(need[g.framework_id]):
            count[g.framework_id] += 1
            a.recover(g.framework_id, "s1", g.resources - need[g.framework_id], 0, now)
        else:
            a.recover(g.framework_id, "s1", g.resources, 1000, now)
    return count


@pytest.mark.parametrize("kind,expected", [("drf", {"A": 3, "B": 2}), ("fifo", {"A": 4, "B": 1})],
                         ids=["drf-paper", "fifo"])
def test_paper_example(kind, expected) -> None:
    assert _run_paper_example(kind) == expected


def test_whole_free_resources_go_to_one_framework_per_agent() -> None:
    a = HierarchicalAllocator(seed=0)
    for i in range(3):
        a.add_agent(f"s{i}", R("cpus:2;mem:1024"))
    a.add_framework("f")
    grants = a.allocate(0)
    assert sorted(g.agent_id for g in grants) == ["s0", "s1", "s2"]
    assert all(g.resources == R("cpus:2;mem:1024") for g in grants)
    assert a.allocate(1) == []  # everything is offered


def test_filter_lasts_refuse_seconds_and_only_while_it_covers_the_free_resources() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s", R("cpus:4;mem:1024"))
    a.add_framework("f")
    a.allocate(0)
    a.recover("f", "s", R("cpus:2;mem:512"), refuse_seconds=5, now=0)  # declined half; half stays held
    assert a.allocate(1) == [] and a.filtered("f", "s", 1)
    assert [x.framework_id for x in a.allocate(5.1)] == ["f"]  # expired
    a.recover("f", "s", R("cpus:4;mem:1024"), refuse_seconds=100, now=6)
    assert a.allocate(7) == []
    a.add_framework("g")
    a.remove_framework("g")
    assert a.allocate(8) == []


def test_more_free_resources_than_refused_lift_the_filter() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s", R("cpus:4;mem:1024"))
    a.add_framework("f")
    a.allocate(0)
    a.recover("f", "s", R("cpus:1;mem:256"), refuse_seconds=100, now=0)  # refuses a little
    assert a.allocate(1) == []
    a.recover("f", "s", R("cpus:3;mem:768"), now=2)  # a task ended: more free than refused
    (g,) = a.allocate(3)
    assert g.resources == R("cpus:4;mem:1024")


def test_suppress_and_revive() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s", R("cpus:1;mem:64"))
    a.add_framework("f")
    a.suppress("f")
    assert a.allocate(0) == []
    a.revive("f")
    assert len(a.allocate(0)) == 1
    a.recover("f", "s", R("cpus:1;mem:64"), refuse_seconds=1000, now=0)
    a.revive("f")  # clears filters
    assert len(a.allocate(1)) == 1


def test_unsuppress_offers_again_but_keeps_filters_where_revive_clears_them() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s", R("cpus:1;mem:64"))
    a.add_framework("f")
    (grant,) = a.allocate(0)
    a.recover("f", "s", grant.resources, refuse_seconds=1000, now=0)
    a.suppress("f")
    a.unsuppress("f")
    assert not a.is_suppressed("f") and a.allocate(1) == []   # the DECLINE filter holds
    a.revive("f")
    assert len(a.allocate(2)) == 1


def test_a_role_change_moves_what_the_framework_holds_to_the_new_role() -> None:
    """x holds 3 of 4 agents in role a; once x moves to role b, role a is empty, so a newcomer in role a
    (share 0) gets the free agent before y in role b (which now carries x's 3/4)."""
    a = HierarchicalAllocator(seed=0)
    for i in range(4):
        a.add_agent(f"s{i}", R("cpus:1;mem:100"))
    a.add_framework("x", role="a")
    a.add_framework("y", role="b")
    for i in range(3):
        a.allocate_used("x", f"s{i}", R("cpus:1;mem:100"))
    a.change_role("x", "b")
    a.add_framework("z", role="a")
    (grant,) = a.allocate(0)
    assert (grant.framework_id, grant.agent_id) == ("z", "s3")
    assert a.allocation("x") == R("cpus:3;mem:300")
    a.remove_framework("x")   # what it held goes back to the free pool from its new role
    assert {g.agent_id for g in a.allocate(1)} == {"s0", "s1", "s2"}


def test_minimum_allocatable_and_inactive_agents() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("tiny", R("cpus:0.005;mem:16;disk:100"))
    a.add_agent("off", R("cpus:1;mem:64"))
    a.deactivate_agent("off")
    a.add_framework("f")
    assert a.allocate(0) == []
    a.activate_agent("off")
    assert [g.agent_id for g in a.allocate(1)] == ["off"]


def test_roles_share_by_weight_then_frameworks_within_a_role() -> None:
    a = HierarchicalAllocator(seed=0)
    a.set_role_weight("big", 3.0)
    for i in range(8):
        a.add_agent(f"s{i}", R("cpus:1;mem:100"))
    a.add_framework("b1", role="big")
    a.add_framework("b2", role="big")
    a.add_framework("s1", role="small")
    got: dict[str, int] = {}
    for g in a.allocate(0):
        got[g.framework_id] = got.get(g.framework_id, 0) + 1
    assert got["b1"] + got["b2"] == 6 and got["s1"] == 2 and abs(got["b1"] - got["b2"]) <= 1


def test_agent_added_with_used_resources_counts_for_the_framework() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_framework("f")
    a.add_framework("g")
    a.add_agent("s", R("cpus:4;mem:400"), used={"f": R("cpus:3;mem:300")})
    (gr,) = a.allocate(0)
    assert gr.framework_id == "g" and gr.resources == R("cpus:1;mem:100")


def test_unknown_allocator_name_is_refused() -> None:
    with pytest.raises(ValueError, match="known: drf, fifo"):
        make_allocator("lottery")


@pytest.mark.parametrize("sorter", [DRFSorter, FIFOSorter], ids=["drf", "fifo"])
def test_sorter_interface(sorter) -> None:
    s = sorter()
    s.add_total({"cpus": 10, "mem": 100})
    for c in ("a", "b", "c"):
        s.add(c)
    s.allocated("a", {"cpus": 5})
    s.allocated("b", {"mem": 10})
    s.deactivate("c")
    order = s.sort()
    assert "c" not in order and len(s) == 3 and "a" in s
    if sorter is DRFSorter:
        assert order == ["b", "a"]
        assert s.pick(lambda c: c != "b") == "a"
    else:
        assert order == ["a", "b"]
    s.unallocated("a", {"cpus": 5})
    assert s.allocation("a") == {}
    s.remove("a")
    with pytest.raises(KeyError):
        s.add("b")


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from(["cpus", "mem", "disk", "gpus", "ports_n"]),
                          st.floats(0.0, 1e6), st.booleans()), max_size=40),
       st.dictionaries(st.sampled_from(["cpus", "mem", "disk", "gpus", "ports_n"]), st.floats(0.1, 1e7), min_size=1),
       st.floats(0.1, 10.0))
def test_drf_share_is_the_weighted_dominant_share_and_pick_agrees_with_sort(changes, total, weight) -> None:
    """share() keys the heap that pick() walks and orders sort(): both must give DRF's share, and the
    heap's first client must be sort()'s, across allocations, recoveries (clamped at 0) and new kinds
    (a fifth kind grows every row: it used to index the old, narrower numpy array)."""
    s = DRFSorter()
    s.add_total(total)
    weights = {c: (weight if c == "a" else 1.0) for c in "abcd"}
    for c in "abcd":
        s.add(c, weights[c])
    for client, kind, amount, allocate in changes:
        (s.allocated if allocate else s.unallocated)(client, {kind: amount})
    inverse = {kind: 1.0 / t for kind, t in total.items()}
    for c in "abcd":
        held = s.allocation(c)
        assert all(v > 0 for v in held.values())
        expected = max([v * inverse.get(kind, 0.0) for kind, v in held.items()], default=0.0) / weights[c]
        assert s.share(c) == expected
    assert s.pick(lambda c: True) == s.sort()[0]


# ---- invariants --------------------------------------------------------
agents_st = st.lists(st.tuples(st.integers(1, 16), st.integers(64, 4096)), min_size=1, max_size=12)
demands_st = st.lists(st.tuples(st.sampled_from([0.5, 1, 2]), st.sampled_from([64, 256, 1024])),
                      min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(agents_st, demands_st, st.integers(0, 2**16))
def test_never_over_allocates_and_offers_go_to_the_lowest_dominant_share(agents, demands, seed) -> None:
    a = HierarchicalAllocator(seed=seed)
    total = {"cpus": 0.0, "mem": 0.0}
    for i, (c, m) in enumerate(agents):
        a.add_agent(f"s{i}", R(f"cpus:{c};mem:{m}"))
        total["cpus"] += c
        total["mem"] += m
    need = {f"f{j}": R(f"cpus:{c};mem:{m}") for j, (c, m) in enumerate(demands)}
    held = {f: Resources() for f in need}
    for f in need:
        a.add_framework(f)

    def share(alloc: dict[str, Resources], f: str) -> float:
        return max(alloc[f].scalar(k) / total[k] for k in total)

    for now in range(200):
        grants = a.allocate(float(now))
        if not grants:
            break
        alloc = dict(held)  # the allocator's view: what tasks hold plus what this round offered so far
        for g in grants:
            eligible = [f for f in need if not a.filtered(f, g.agent_id, float(now))]
            assert share(alloc, g.framework_id) <= min(share(alloc, f) for f in eligible) + 1e-9
            alloc[g.framework_id] = alloc[g.framework_id] + g.resources
        for g in grants:
            task = need[g.framework_id]
            if g.resources.contains(task):
                held[g.framework_id] = held[g.framework_id] + task
                a.recover(g.framework_id, g.agent_id, g.resources - task, 0, now)
            else:
                a.recover(g.framework_id, g.agent_id, g.resources, 1e6, now)
        for i, (c, m) in enumerate(agents):
            free = a.free(f"s{i}")
            assert free.scalar("cpus") <= c + 1e-9 and free.scalar("mem") <= m + 1e-9
    used = sum((held[f] for f in held), Resources())
    assert used.scalar("cpus") <= total["cpus"] + 1e-9 and used.scalar("mem") <= total["mem"] + 1e-9
    for f in need:
        assert a.allocation(f) == held[f]


def test_revive_does_not_offer_a_deactivated_agent() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s", R("cpus:1;mem:64"))
    a.add_framework("f")
    (g,) = a.allocate(0)
    a.recover("f", "s", g.resources, refuse_seconds=5, now=0)  # declined: a filter on "s"
    a.deactivate_agent("s")                                     # then the agent disconnects
    a.revive("f")                                               # REVIVE clears the filter...
    assert a.allocate(1) == []                                  # ...but "s" is not offerable
    a.activate_agent("s")
    assert [g.agent_id for g in a.allocate(2)] == ["s"]
