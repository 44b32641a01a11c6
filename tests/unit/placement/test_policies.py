"""Each built-in policy on small, readable cases (table-driven)."""

from __future__ import annotations

import pytest

from scylla_singa.placement.fit_status import Code, Reason
from scylla_singa.placement.place import NotPlaced, Placed, place
from scylla_singa.placement.policy import builtin_policy_names, load_policy, parse_policy
from .builders import agent, job

DOWNPOUR = dict(nworker_groups=2, nworkers_per_group=2, nservers_per_group=2, server_worker_separate=True)


def test_builtin_policies_are_the_four_documented() -> None:
    assert builtin_policy_names() == ["network", "pack", "singa11", "spread"]


@pytest.mark.parametrize("policy, agents, shape, expect_agents_used", [
    pytest.param("spread", [agent(i) for i in range(3)], dict(nworker_groups=3, nserver_groups=3), 3,
                 id="spread-uses-all-agents"),
    pytest.param("spread", [agent(i) for i in range(6)], DOWNPOUR, 6, id="spread-one-per-agent"),
    pytest.param("pack", [agent(i) for i in range(3)], dict(nworker_groups=3, nserver_groups=3), 1,
                 id="pack-one-agent-when-it-fits"),
    pytest.param("pack", [agent(i, cpus=2) for i in range(4)], DOWNPOUR, 3, id="pack-fewest-agents"),
    pytest.param("singa11", [agent(i) for i in range(3)], dict(nworker_groups=3, nserver_groups=3), 3,
                 id="singa11-one-per-agent"),
    pytest.param("network", [agent(i) for i in range(3)], DOWNPOUR, 2, id="network-colocates"),
])
def test_agents_used(policy: str, agents, shape: dict, expect_agents_used: int) -> None:
    result = place(job(**shape), agents, load_policy(policy))
    assert isinstance(result, Placed), result
    assert result.agents_used == expect_agents_used


def test_singa11_needs_cpus_for_a_whole_process() -> None:
    # separate: nworkers_per_procs + nservers_per_procs = 2 cpus per agent
    plan = job(nworker_groups=1, nworkers_per_group=2, nservers_per_group=1, server_worker_separate=True)
    agents = [agent(1, cpus=1), agent(2, cpus=2), agent(3, cpus=2), agent(4, cpus=8)]
    result = place(plan, agents, load_policy("singa11"))
    assert isinstance(result, Placed)
    assert "agent-node1" not in result.assignment.values()
    assert len(set(result.assignment.values())) == 3


def test_singa11_rejection_names_the_rule() -> None:
    plan = job(nworker_groups=1, nworkers_per_group=1, nservers_per_group=1, server_worker_separate=True)
    result = place(plan, [agent(1, cpus=1), agent(2, cpus=1)], load_policy("singa11"))
    assert isinstance(result, NotPlaced)
    assert result.per_agent["agent-node1"].reasons == (
        Reason("insufficient cpus for a whole SINGA process", "need 2, free 1"),)


def test_network_respects_bandwidth_and_says_so() -> None:
    # one 1-cpu process per agent forces traffic across agents; 0.1 Mbit/s cannot carry it
    plan = job(nworker_groups=2, nserver_groups=2, cpus=4)
    result = place(plan, [agent(1, net_bw=0.1), agent(2, net_bw=0.1)], load_policy("network"))
    assert isinstance(result, NotPlaced)
    assert "net_bw" in result.summary()
    assert result.code is Code.UNSCHEDULABLE
    ok = place(plan, [agent(1, net_bw=1000), agent(2, net_bw=1000)], load_policy("network"))
    assert isinstance(ok, Placed)
    assert max(ok.cross_mbps.values()) <= 1000


def test_network_reads_net_bw_as_the_limit_per_agent() -> None:
    # three server groups syncing: each pair exchanges 64 Mbit/s; two processes share an agent,
    # so the lone one carries 128 Mbit/s
    plan = job(nworker_groups=3, nserver_groups=3, cpus=2, param_bytes=400_000)
    tight = [agent(1, cpus=4, net_bw=100), agent(2, cpus=4, net_bw=100)]
    assert isinstance(place(plan, tight, load_policy("network")), NotPlaced)
    roomy = [agent(1, cpus=4, net_bw=150), agent(2, cpus=4, net_bw=150)]
    result = place(plan, roomy, load_policy("network"))
    assert isinstance(result, Placed)
    assert sorted(result.cross_mbps.values()) == pytest.approx([128.0, 128.0])


@pytest.mark.parametrize("constraints, allowed", [
    pytest.param("attributes: {match: {rack: r1}}", {"agent-node1", "agent-node2"}, id="attribute-match"),
    pytest.param("attributes: {exclude: {rack: r1}}", {"agent-node3"}, id="attribute-exclude"),
    pytest.param("attributes: {match: {rack: 'r*'}, exclude: {zone: b}}", {"agent-node1", "agent-node3"},
                 id="attribute-glob-and-exclude"),
    pytest.param("hostnames: {include: [node1, node3]}", {"agent-node1", "agent-node3"}, id="hostname-include"),
    pytest.param("hostnames: {exclude: ['node[12]']}", {"agent-node3"}, id="hostname-exclude-glob"),
])
def test_constraints(constraints: str, allowed: set[str]) -> None:
    policy = parse_policy(f"name: c\nfilters: [resources-fit]\nscores: [spread]\nconstraints:\n  {constraints}\n")
    agents = [agent(1, rack="r1", zone="a"), agent(2, rack="r1", zone="b"), agent(3, rack="r2", zone="a")]
    result = place(job(nworker_groups=3, nserver_groups=3), agents, policy)
    assert isinstance(result, Placed), result
    assert set(result.assignment.values()) <= allowed


def test_constraint_that_nothing_passes_is_unresolvable() -> None:
    policy = parse_policy("name: c\nfilters: [resources-fit]\nconstraints:\n  attributes: {match: {rack: r9}}\n")
    result = place(job(), [agent(1, rack="r1"), agent(2, rack="r2")], policy)
    assert isinstance(result, NotPlaced) and result.code is Code.UNRESOLVABLE
    assert "0/2 agents can host process 0" in result.summary()
    assert result.per_agent["agent-node1"].reasons == (Reason("attribute rack=r1 is not r9"),)


def test_max_procs_per_agent_constraint() -> None:
    policy = parse_policy("name: c\nfilters: [resources-fit]\nscores: [pack]\nconstraints:\n  max_procs_per_agent: 2\n")
    result = place(job(nworker_groups=4, nserver_groups=4), [agent(i, cpus=16) for i in range(4)], policy)
    assert isinstance(result, Placed)
    counts = [list(result.assignment.values()).count(a) for a in set(result.assignment.values())]
    assert max(counts) == 2 and result.agents_used == 2


def test_shortage_summary_names_the_short_resource() -> None:
    result = place(job(nworker_groups=2, nserver_groups=2, cpus=3, mem=512),
                   [agent(1, cpus=4, mem=4096), agent(2, cpus=2, mem=4096)], load_policy("pack"))
    assert isinstance(result, NotPlaced)
    assert result.summary() == ("0/2 agents can host process 1 (3 cpus, 512 MB) after placing 1 of 2: "
                                "2 insufficient cpus")
    assert result.per_agent["agent-node2"].reasons == (Reason("insufficient cpus", "need 3, free 2"),)
    assert str(result.per_agent["agent-node2"]) == "insufficient cpus (need 3, free 2)"
    assert result.status.reasons == (Reason("insufficient cpus", "2 agents"),)


def test_every_short_resource_is_a_reason_of_its_own_and_agents_are_counted_by_the_first() -> None:
    result = place(job(cpus=3, mem=2048), [agent(1, cpus=2, mem=1024), agent(2, cpus=4, mem=1024),
                                           agent(3, cpus=1, mem=4096)], load_policy("spread"))
    assert isinstance(result, NotPlaced)
    assert result.per_agent["agent-node1"].reasons == (Reason("insufficient cpus", "need 3, free 2"),
                                                       Reason("insufficient mem", "need 2048 MB, free 1024 MB"))
    assert str(result.per_agent["agent-node1"]) == ("insufficient cpus (need 3, free 2); "
                                                    "insufficient mem (need 2048 MB, free 1024 MB)")
    assert result.status.reasons == (Reason("insufficient cpus", "2 agents"), Reason("insufficient mem", "1 agent"))
    assert result.summary().endswith(": 2 insufficient cpus, 1 insufficient mem")


def test_no_agents_at_all() -> None:
    result = place(job(), [], load_policy("spread"))
    assert isinstance(result, NotPlaced) and "no agents are offering resources" in result.summary()


def test_gpus_are_a_resource() -> None:
    plan = job(nworker_groups=2, nserver_groups=2, gpus=1)
    result = place(plan, [agent(1, gpus=0), agent(2, gpus=1), agent(3, gpus=1)], load_policy("spread"))
    assert isinstance(result, Placed)
    assert set(result.assignment.values()) == {"agent-node2", "agent-node3"}


def test_placement_is_deterministic() -> None:
    plan = job(**DOWNPOUR)
    agents = [agent(i, cpus=3) for i in range(5)]
    first = place(plan, agents, load_policy("spread"))
    assert all(place(plan, agents, load_policy("spread")) == first for _ in range(3))
