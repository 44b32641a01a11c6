"""Quota alone: QuotaConfig checks with Mesos's texts, and the allocator offering within limits and keeping
the headroom guarantees need (table-driven, plus a Hypothesis invariant)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api.resources import Resources
from scylla_singa.mesos.master.allocator import HierarchicalAllocator
from scylla_singa.mesos.master.quota import (Quota, QuotaInvalid, cap, quota_from_config, quota_from_request,
                                             unmet, within_limits)

R = Resources.parse


def _config(role: str = "team", guarantees: dict | None = None, limits: dict | None = None) -> dict:
    return {"role": role, "guarantees": {k: {"value": v} for k, v in (guarantees or {}).items()},
            "limits": {k: {"value": v} for k, v in (limits or {}).items()}}


def test_a_valid_config_becomes_a_quota() -> None:
    assert quota_from_config(_config(guarantees={"cpus": 2}, limits={"cpus": 4, "mem": 1024})) == \
        ("team", Quota({"cpus": 2.0}, {"cpus": 4.0, "mem": 1024.0}))
    assert quota_from_config(_config())[1].is_default


@pytest.mark.parametrize("config, message", [
    ({"guarantees": {}}, "'QuotaConfig.role' must be set"),
    (_config(role="a b"), "Invalid 'QuotaConfig.role': Role name must not contain whitespace"),
    (_config(guarantees={"cpus": 5}, limits={"cpus": 2}),
     "'QuotaConfig.guarantees' { cpus: 5 } is not contained within the 'QuotaConfig.limits' { cpus: 2 }"),
    (_config(limits={"cpus": -1}), "Invalid limit configuration {'cpus': -1}: Invalid scalar value"),
    (_config(guarantees={"mem": 2.0 * 1024 ** 4}), "Invalid 'QuotaConfig.guarantees': { mem: 2199023255552 } is "
                                                   "invalid: values greater than 1 exabyte"),
    (_config(limits={"cpus": "four"}), "Invalid limit configuration {'cpus': 'four'}: a scalar value is expected"),
])
def test_bad_configs_are_refused_with_mesoss_text(config, message) -> None:
    with pytest.raises(QuotaInvalid) as refused:
        quota_from_config(config)
    assert str(refused.value).startswith(message)


def test_set_quotas_guarantee_is_also_its_limit() -> None:
    request = {"role": "team", "guarantee": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 2}}]}
    assert quota_from_request(request) == ("team", Quota({"cpus": 2.0}, {"cpus": 2.0}))


def test_the_arithmetic() -> None:
    q = Quota({"cpus": 2.0}, {"cpus": 4.0})
    assert unmet(q, {"cpus": 0.5}) == {"cpus": 1.5} and unmet(q, {"cpus": 3}) == {}
    assert within_limits(q, {"cpus": 5}) == {"cpus": 0.0}
    assert cap(R("cpus:8;mem:64;ports:[1-2]"), {"cpus": 3}) == R("cpus:3;mem:64;ports:[1-2]")


def test_a_limit_cuts_offers_and_the_rest_goes_to_others() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s", R("cpus:4;mem:1024"))
    a.add_framework("capped", role="capped")
    a.set_quota("capped", Quota({}, {"cpus": 1.0}))
    (g,) = a.allocate(0)
    assert (g.framework_id, g.resources) == ("capped", R("cpus:1;mem:1024"))
    a.add_framework("free", role="free")
    (g2,) = a.allocate(1)   # the agent stayed offerable: its other 3 CPUs
    assert (g2.framework_id, g2.resources) == ("free", R("cpus:3"))
    a.set_quota("capped", None)
    a.recover("free", "s", R("cpus:3"), refuse_seconds=1000, now=1)
    assert [(x.framework_id, x.resources) for x in a.allocate(2)] == [("capped", R("cpus:3"))]


def test_unmet_guarantees_keep_their_headroom_and_come_first() -> None:
    a = HierarchicalAllocator(seed=0)
    a.add_agent("s1", R("cpus:2;mem:512"))
    a.add_agent("s2", R("cpus:2;mem:512"))
    a.set_quota("prod", Quota({"cpus": 3.0}, {}))
    a.add_framework("other", role="other")
    grants = a.allocate(0)   # prod has no framework yet: others get only what leaves 3 CPUs unallocated
    assert sum(g.resources.scalar("cpus") for g in grants) == pytest.approx(1.0)
    a.add_framework("prod", role="prod")
    grants = a.allocate(1)
    assert {g.framework_id for g in grants} == {"prod"}
    assert sum(g.resources.scalar("cpus") for g in grants) == pytest.approx(3.0)


@settings(max_examples=60, deadline=None)
@given(agents=st.lists(st.integers(1, 8), min_size=1, max_size=6),
       guarantee=st.integers(0, 10), limit=st.integers(0, 12), seed=st.integers(0, 1000))
def test_never_beyond_a_limit_and_never_into_the_headroom(agents, guarantee, limit, seed) -> None:
    """However the agents come, the limited role never holds more than its limit, and while the guaranteed
    role has no framework the other role leaves its guarantee (as far as the cluster has it) unallocated."""
    a = HierarchicalAllocator(seed=seed)
    for i, cpus in enumerate(agents):
        a.add_agent(f"s{i}", Resources({"cpus": float(cpus), "mem": 256.0}))
    a.set_quota("limited", Quota({}, {"cpus": float(limit)}))
    a.set_quota("guaranteed", Quota({"cpus": float(guarantee)}, {}))
    a.add_framework("l", role="limited")
    a.add_framework("o", role="other")
    for now in range(4):
        a.allocate(float(now))
    total = float(sum(agents))
    assert a.allocation("l").scalar("cpus") <= limit + 1e-9
    held = a.allocation("l").scalar("cpus") + a.allocation("o").scalar("cpus")
    assert held <= max(0.0, total - guarantee) + 1e-9
