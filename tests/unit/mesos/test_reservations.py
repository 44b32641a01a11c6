"""Reservations and persistent volumes as values: Resources with reserved parts (JSON in both of Mesos's forms,
text, folding), RESERVE/UNRESERVE/CREATE/DESTROY checks (reservation_ops), the allocator offering a role's
reservations to that role only (table-driven and a Hypothesis property), and the agent's volume directories."""

from __future__ import annotations

import re
import stat
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api.reservations import Reservation
from scylla_singa.mesos.api.resources import ResourceError, Resources, with_checkpointed
from scylla_singa.mesos.master.allocator import HierarchicalAllocator
from scylla_singa.mesos.master.quota import Quota
from scylla_singa.mesos.agent import persistent_volumes
from scylla_singa.mesos.master.reservation_ops import (OperationInvalid, create, destroy, grow, reserve, shrink,
                                                       unreserve, volume_conflict)


def _scalar(name: str, amount: float, **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "SCALAR", "scalar": {"value": amount}, **fields}


def _dynamic(role: str, principal: str | None = None) -> list[dict[str, Any]]:
    info: dict[str, Any] = {"type": "DYNAMIC", "role": role}
    if principal is not None:
        info["principal"] = principal
    return [info]


ML = Reservation("ml")


@pytest.mark.parametrize("fields, reservation", [
    ({}, None),
    ({"role": "*"}, None),
    ({"reservations": _dynamic("ml")}, ML),
    ({"reservations": _dynamic("ml", "ops")}, Reservation("ml", principal="ops")),
    ({"role": "ml"}, Reservation("ml", "STATIC")),
    ({"role": "ml", "reservation": {"principal": "ops"}}, Reservation("ml", principal="ops")),
    ({"reservations": [{"type": "DYNAMIC", "role": "ml", "labels": {"labels": [{"key": "k", "value": "v"}]}}]},
     Reservation("ml", labels=(("k", "v"),))),
])
def test_both_json_forms_read_as_one_reservation(fields: dict, reservation: Reservation | None) -> None:
    res = Resources.from_json([_scalar("cpus", 1, **fields)])
    assert res.reservations() == {reservation}
    assert Resources.from_json(res.to_json()) == res   # what we write reads back the same


@pytest.mark.parametrize("fields, message", [
    ({"reservations": [{"type": "DYNAMIC", "role": "a"}, {"type": "DYNAMIC", "role": "b"}]},
     "Invalid refined reservation: role 'b' is not a refinement of 'a'"),
    ({"reservations": [{"type": "DYNAMIC", "role": "a"}, {"type": "DYNAMIC", "role": "a"}]},
     "role 'a' is not a refinement of 'a'"),
    ({"reservations": [{"type": "STATIC", "role": "a"}, {"type": "STATIC", "role": "a/b"}]},
     "A refined reservation cannot be STATIC"),
    ({"reservations": [{"type": "DYNAMIC"}]}, "needs the role"),
    ({"reservations": [{"type": "SHARED", "role": "a"}]}, "STATIC or DYNAMIC"),
    ({"reservations": [{"type": "DYNAMIC", "role": "a", "labels": {"labels": [{"value": 1}]}}]}, "labels"),
    ({"role": 7}, "role name"),
])
def test_malformed_reservations_are_refused_naming_the_resource(fields: dict, message: str) -> None:
    with pytest.raises(ResourceError, match=message) as refused:
        Resources.from_json([_scalar("cpus", 1, **fields)])
    assert "'cpus'" in str(refused.value)


def test_reserved_and_unreserved_stay_apart_and_fold_for_counting() -> None:
    res = Resources.from_json([_scalar("cpus", 2), _scalar("cpus", 1, reservations=_dynamic("ml")),
                               _scalar("mem", 64, reservations=_dynamic("ml", "ops"))])
    assert res.scalar("cpus") == 3.0 and res.amounts == {"cpus": 3.0, "mem": 64.0}
    assert res.to_dict()["cpus"] == 3.0 and res.quantities() == {"cpus": 3.0, "mem": 64.0}
    assert res.offerable_to("other") == Resources.parse("cpus:2")
    assert res.offerable_to("ml") == res and res.reserved_roles() == {"ml"}
    assert str(res) == ("cpus:2; cpus(reservations: [(DYNAMIC,ml)]):1; "
                        "mem(reservations: [(DYNAMIC,ml,ops)]):64")
    assert not Resources.parse("cpus:2").contains(res.reserved())   # a reservation is its own resource
    assert res.by_role()["ml"].amounts == {"cpus": 1.0, "mem": 64.0}


def test_reserve_and_unreserve_are_checked_as_mesos_checks_them() -> None:
    before, after = reserve([_scalar("cpus", 1, reservations=_dynamic("ml"))], None)
    assert before == Resources.parse("cpus:1") and after.reserved("ml").amounts == {"cpus": 1.0}
    assert unreserve(after.to_json()) == (after, before)
    cases = [
        (lambda: reserve([_scalar("cpus", 1)], None), "Resource cpus:1 is not dynamically reserved"),
        (lambda: reserve([_scalar("cpus", 1, role="ml")], None),
         "Resource cpus(reservations: [(STATIC,ml)]):1 is not dynamically reserved"),
        (lambda: reserve([_scalar("cpus", 1, reservations=_dynamic("ml", "eve"))], "ops"),
         "reserved by principal 'eve', but the request comes from principal 'ops'"),
        # a framework's RESERVE (roles given): what it was offered, for the role it was offered to
        (lambda: reserve([_scalar("cpus", 1, reservations=_dynamic("ml"))], None, {"ml"}),
         "A reserve operation was attempted on unallocated resource cpus(reservations: [(DYNAMIC,ml)]):1, but "
         "frameworks can only perform reservations on allocated resources"),
        (lambda: reserve([_scalar("cpus", 1, reservations=_dynamic("ml"), allocation_info={"role": "batch"})],
                         None, {"batch"}),
         "A reserve operation was attempted for a resource with role 'ml', but the resource was allocated to "
         "role 'batch'"),
        (lambda: reserve([_scalar("cpus", 1, reservations=_dynamic("ml"), allocation_info={"role": "ml"})],
                         None, {"batch", "etl"}),
         "A reserve operation was attempted for a resource allocated to role 'ml', but the framework only has "
         "roles '{ batch, etl }'"),
        (lambda: reserve([], None), "needs the resources"),
        (lambda: unreserve([_scalar("cpus", 1)]), "not dynamically reserved"),
        (lambda: unreserve([_scalar("cpus", -1, reservations=_dynamic("ml"))]), "Invalid resources"),
    ]
    for call, message in cases:
        with pytest.raises(OperationInvalid, match=message.replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[").replace("]", r"\]")):
            call()


def test_an_agent_total_takes_back_its_checkpointed_reservations() -> None:
    kept = Resources.from_json([_scalar("cpus", 1, reservations=_dynamic("ml"))])
    total = with_checkpointed(Resources.parse("cpus:4;mem:100"), kept)
    assert total.amounts == {"cpus": 4.0, "mem": 100.0} and total.reserved() == kept
    assert with_checkpointed(Resources.parse("mem:100"), kept) == Resources.parse("mem:100")   # no longer fits


def _agent_with(reserved_for: str, allocator: HierarchicalAllocator) -> None:
    allocator.add_agent("a1", Resources.parse("cpus:4;mem:1024"))
    before, after = reserve([_scalar("cpus", 2, reservations=_dynamic(reserved_for))], None)
    allocator.convert("a1", before, after)


@pytest.mark.parametrize("roles, offered", [
    ({"f-ml": "ml"}, {"f-ml": {"cpus": 4.0, "mem": 1024.0}}),
    ({"f-batch": "batch"}, {"f-batch": {"cpus": 2.0, "mem": 1024.0}}),
])
def test_a_reservation_is_offered_to_its_role_only(roles: dict[str, str], offered: dict) -> None:
    allocator = HierarchicalAllocator(seed=1)
    _agent_with("ml", allocator)
    for fw, role in roles.items():
        allocator.add_framework(fw, role)
    assert {g.framework_id: g.resources.amounts for g in allocator.allocate(1.0)} == offered


def test_what_a_role_leaves_reserved_waits_for_it() -> None:
    allocator = HierarchicalAllocator(seed=1)
    _agent_with("ml", allocator)
    allocator.add_framework("f-batch", "batch")
    assert [g.resources.amounts for g in allocator.allocate(1.0)] == [{"cpus": 2.0, "mem": 1024.0}]
    assert allocator.allocate(2.0) == []
    allocator.add_framework("f-ml", "ml")
    (grant,) = allocator.allocate(3.0)
    assert grant.framework_id == "f-ml" and grant.resources.amounts == {"cpus": 2.0}
    assert grant.resources.reserved_roles() == {"ml"}


OPS = st.lists(st.tuples(st.sampled_from(["reserve", "unreserve", "allocate", "recover"]),
                         st.sampled_from(["ml", "batch"]), st.integers(1, 3)), max_size=25)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_reservations_never_change_the_totals_nor_reach_another_role(ops: list[tuple[str, str, int]]) -> None:
    """Any sequence of operator reservations, allocation rounds and returns: the agent's amounts stay its
    machine's, and no grant carries another role's reservation."""
    allocator = HierarchicalAllocator(seed=3)
    allocator.add_agent("a1", Resources.parse("cpus:4;mem:1024"))
    allocator.add_framework("f-ml", "ml")
    allocator.add_framework("f-batch", "batch")
    role_of = {"f-ml": "ml", "f-batch": "batch"}
    held: dict[str, Resources] = {"f-ml": Resources(), "f-batch": Resources()}
    for now, (kind, role, n) in enumerate(ops):
        piece = [_scalar("cpus", n, reservations=_dynamic(role))]
        if kind in ("reserve", "unreserve"):
            before, after = reserve(piece, None) if kind == "reserve" else unreserve(piece)
            if allocator.free("a1").contains(before):
                allocator.convert("a1", before, after)
        elif kind == "allocate":
            for grant in allocator.allocate(float(now)):
                assert grant.resources.reserved_roles() <= {role_of[grant.framework_id]}
                held[grant.framework_id] = held[grant.framework_id] + grant.resources
        else:
            fw = "f-ml" if role == "ml" else "f-batch"
            allocator.recover(fw, "a1", held[fw])
            held[fw] = Resources()
        everything = allocator.free("a1") + held["f-ml"] + held["f-batch"]
        assert everything.amounts == {"cpus": 4.0, "mem": 1024.0}


# ---- persistent volumes -------------------------------------------------------

def _volume(volume_id: str, path: str = "data", size: float = 64, role: str = "ml",
            mode: str = "RW") -> dict[str, Any]:
    return _scalar("disk", size, reservations=_dynamic(role), disk={"persistence": {"id": volume_id},
                                                                    "volume": {"mode": mode, "container_path": path}})


def test_a_volume_is_a_resource_of_its_own_made_of_reserved_disk() -> None:
    before, after = create([_volume("v1")], None)
    assert before.amounts == after.amounts == {"disk": 64.0}
    assert str(after) == "disk(reservations: [(DYNAMIC,ml)])[v1:data]:64"
    assert Resources.from_json(after.to_json()) == after and after.without_volumes() == before
    assert destroy(after.to_json()) == (after, before)
    ((volume, reservation, size),) = after.volumes()
    assert (volume.id, volume.container_path, reservation.role, size) == ("v1", "data", "ml", 64.0)


@pytest.mark.parametrize("items, message", [
    ([_scalar("disk", 1, reservations=_dynamic("ml"))], "does not have DiskInfo"),
    ([_volume("ro", mode="RO")], "Read-only persistent volume not supported"),
    ([_volume("v1"), _volume("v1", "other")], "Persistence ID 'v1' is not unique"),
    ([_volume("../etc")], "must be letters, digits"),
    ([_volume("v1", role="a b")], "must be letters, digits"),
    ([_volume("v1", "../../escape")], "must not contain '..'"),
    ([_scalar("disk", 1, disk={"persistence": {"id": "u"}, "volume": {"mode": "RW", "container_path": "x"}})],
     "Persistent volumes cannot be created from unreserved resources"),
    ([], "needs the volumes"),
])
def test_bad_volumes_are_refused_with_the_reason(items: list, message: str) -> None:
    with pytest.raises(OperationInvalid, match=re.escape(message)):
        create(items, None)


def test_a_volume_names_only_the_principal_who_asks_and_the_frameworks_own_role() -> None:
    mallory = _scalar("disk", 8, reservations=_dynamic("ml"), disk={"persistence": {"id": "v", "principal": "eve"},
                                                                    "volume": {"mode": "RW", "container_path": "v"}})
    with pytest.raises(OperationInvalid, match="names principal 'eve', but the request comes from principal 'ops'"):
        create([mallory], "ops")
    with pytest.raises(OperationInvalid, match="reserved for role 'ml', which is not one of this framework's roles"):
        create([_volume("v")], None, {"batch"})
    assert create([_volume("v")], "ops", {"ml"})[1].volumes()


def test_what_the_agent_holds_decides_a_create_or_destroy() -> None:
    _, volume = create([_volume("v1")], None)
    assert volume_conflict("CREATE", volume, volume, Resources()) == "Persistence ID 'v1' is not unique"
    assert volume_conflict("CREATE", volume, Resources(), Resources()) is None
    assert volume_conflict("DESTROY", volume, Resources(), Resources()) == "Persistent volumes not found"
    assert volume_conflict("DESTROY", volume, volume, volume) == "Persistent volumes in use: v1"
    assert volume_conflict("DESTROY", volume, volume, Resources()) is None


def test_the_agent_makes_and_removes_volume_directories_and_mounts_what_it_holds(tmp_path) -> None:
    _, held = create([_volume("v1", "ckpt")], None)
    persistent_volumes.sync(tmp_path, [], held.to_json())
    directory = tmp_path / "volumes" / "roles" / "ml" / "v1"
    assert directory.is_dir() and stat.S_IMODE(directory.stat().st_mode) == 0o750
    (mount,) = persistent_volumes.mounts_for({"resources": held.to_json()}, tmp_path, held.to_json())
    assert (mount.directory, mount.container_path, mount.read_only) == (directory, "ckpt", False)
    _, other = create([_volume("v2")], None)
    with pytest.raises(persistent_volumes.VolumeUnusable, match="persistent volume v2 .* is not on this agent"):
        persistent_volumes.mounts_for({"resources": other.to_json()}, tmp_path, held.to_json())
    (directory / "data").write_text("kept")
    _, grown = grow({"volume": held.to_json()[0], "addition": _scalar("disk", 8, reservations=_dynamic("ml"))})
    persistent_volumes.sync(tmp_path, held.to_json(), grown.to_json())   # GROW_VOLUME: the data stays
    assert (directory / "data").read_text() == "kept"
    persistent_volumes.sync(tmp_path, grown.to_json(), [])
    assert not directory.exists()
    with pytest.raises(ValueError):
        persistent_volumes.volume_dir(tmp_path, "ml", "..")


# ---- static reservations (an agent's --resources) --------------------------------

def test_an_agents_flags_reserve_statically_and_such_a_reservation_is_not_unreserved() -> None:
    res = Resources.parse("cpus(ml):1;cpus(*):2;mem:64")
    assert res.reservations() == {None, Reservation("ml", "STATIC")}
    assert res.amounts == {"cpus": 3.0, "mem": 64.0} and res.offerable_to("batch").amounts == {"cpus": 2.0,
                                                                                                 "mem": 64.0}
    with pytest.raises(OperationInvalid, match=re.escape("cpus(reservations: [(STATIC,ml)]):1 is not dynamically")):
        unreserve(res.reserved("ml").to_json())
    with pytest.raises(ResourceError, match="not a role name"):
        Resources.parse("cpus(a b):1")


def test_an_agent_keeps_only_what_operations_made_and_gets_it_back_over_its_flags() -> None:
    flags = Resources.parse("cpus(ml):1;cpus:2;disk(ml):100")
    _, reserved = reserve([_scalar("cpus", 1, reservations=_dynamic("ml"))], None)
    _, volume = create([_scalar("disk", 40, role="ml", disk={"persistence": {"id": "v"},
                                                              "volume": {"mode": "RW", "container_path": "v"}})],
                       None)
    total = flags - reserved.unreserved_form() + reserved - volume.without_volumes() + volume
    kept = total.made_by_operations()
    assert kept == reserved + volume   # not the static cpus, nor the static disk left
    assert with_checkpointed(flags, kept) == total
    assert total.static_form() == flags


def test_a_roles_unused_reservations_count_against_its_quota_limit() -> None:
    """As Mesos counts consumed quota: a role with 2 CPUs reserved and a limit of 3 is offered its 2 reserved
    and 1 unreserved CPU, not more."""
    allocator = HierarchicalAllocator(seed=1)
    _agent_with("ml", allocator)   # 2 of 4 CPUs reserved for ml
    allocator.set_quota("ml", Quota(limits={"cpus": 3.0}))
    allocator.add_framework("f-ml", "ml")
    (grant,) = allocator.allocate(1.0)
    assert grant.resources.amounts["cpus"] == 3.0 and grant.resources.reserved("ml").amounts == {"cpus": 2.0}


def test_a_volume_grows_by_disk_of_its_reservation_and_shrinks_back() -> None:
    _, volume = create([_volume("v1", size=32)], None)
    addition = _scalar("disk", 16, reservations=_dynamic("ml"))
    before, after = grow({"volume": volume.to_json()[0], "addition": addition})
    assert before.amounts == after.amounts == {"disk": 48.0} and after.volumes()[0][2] == 48.0
    before, smaller = shrink({"volume": after.to_json()[0], "subtract": {"value": 8}})
    assert before == after and smaller.amounts == {"disk": 48.0}
    assert smaller.volumes()[0][2] == 40.0 and smaller.without_volumes().scalars == before.without_volumes().scalars
    refusals = [
        (lambda: grow({"volume": volume.to_json()[0], "addition": _scalar("disk", 16)}), "Incompatible resources"),
        (lambda: grow({"volume": volume.to_json()[0], "addition": _scalar("disk", 16, reservations=_dynamic("x"))}),
         "Incompatible resources"),
        (lambda: grow({"volume": volume.to_json()[0], "addition": _scalar("disk", 0)}), "greater than zero"),
        (lambda: grow({"volume": addition, "addition": addition}), "does not have DiskInfo"),
        (lambda: shrink({"volume": volume.to_json()[0], "subtract": {"value": 32}}), "must be smaller than"),
        (lambda: shrink({"volume": volume.to_json()[0]}), "must be greater than zero"),
    ]
    for call, message in refusals:
        with pytest.raises(OperationInvalid, match=message):
            call()


def _shared(volume_id: str, size: float = 64) -> dict[str, Any]:
    return {**_volume(volume_id, size=size), "shared": {}}


def test_a_shared_volume_is_its_own_resource_and_reads_back_as_shared() -> None:
    before, after = create([_shared("s1")], None)
    assert str(after) == "disk(reservations: [(DYNAMIC,ml)])[s1:data]<SHARED>:64"
    assert after.to_json()[0]["shared"] == {} and Resources.from_json(after.to_json()) == after
    assert after.shared() == after and after.without_shared().is_empty() and after.without_volumes() == before
    plain = create([_volume("p1")], None)[1]
    assert (plain + after).shared() == after and (plain + after).without_shared() == plain


@pytest.mark.parametrize("item, message", [
    ({**_scalar("disk", 1, reservations=_dynamic("ml")), "shared": {}}, "Only persistent volumes can be shared"),
    ({**_scalar("cpus", 1), "shared": {}}, "Resource cpus cannot be shared"),
    ({**_volume("v1"), "shared": True}, "'shared' must be a SharedInfo object"),
])
def test_only_a_persistent_volume_can_be_shared(item: dict, message: str) -> None:
    with pytest.raises(ResourceError, match=re.escape(message)):
        Resources.from_json([item])


def test_a_shared_volume_neither_grows_nor_shrinks() -> None:
    volume = _shared("s1")
    with pytest.raises(OperationInvalid, match="Growing a shared persistent volume is not supported"):
        grow({"volume": volume, "addition": _scalar("disk", 8, reservations=_dynamic("ml"))})
    with pytest.raises(OperationInvalid, match="Shrinking a shared persistent volume is not supported"):
        shrink({"volume": volume, "subtract": {"value": 8}})


@pytest.mark.parametrize("takes_shared", [True, False])
def test_a_shared_volume_is_offered_only_to_a_framework_that_takes_shared_resources(takes_shared: bool) -> None:
    allocator = HierarchicalAllocator(seed=1)
    cpus = Resources.from_json([_scalar("cpus", 1, reservations=_dynamic("ml"))])
    allocator.add_agent("a1", cpus + create([_shared("s1")], None)[1])
    allocator.add_framework("f1", "ml")
    allocator.set_capabilities("f1", takes_shared, False)
    (grant,) = allocator.allocate(1.0)
    assert (not grant.resources.shared().is_empty()) == takes_shared
    assert grant.resources.without_shared() == cpus


def _refined(amount: float = 2, base: str = "DYNAMIC") -> dict[str, Any]:
    return _scalar("cpus", amount, reservations=[{"type": base, "role": "eng"},
                                                 {"type": "DYNAMIC", "role": "eng/ml", "principal": "ops"}])


def test_a_refined_reservation_reads_writes_and_prints_as_mesos_does() -> None:
    refined = Resources.from_json([_refined(base="STATIC")])
    assert str(refined) == "cpus(reservations: [(STATIC,eng),(DYNAMIC,eng/ml,ops)]):2"
    (item,) = refined.to_json()
    assert item["reservations"] == [{"type": "STATIC", "role": "eng"},
                                    {"type": "DYNAMIC", "role": "eng/ml", "principal": "ops"}]
    assert "role" not in item and "reservation" not in item   # the older form cannot say it, as in Mesos
    assert Resources.from_json(refined.to_json()) == refined and refined.refined() == refined
    assert refined.static_form() == Resources.from_json([_scalar("cpus", 2, reservations=[
        {"type": "STATIC", "role": "eng"}])])   # what the agent's flags reserved, under the refinement
    assert refined.made_by_operations() == refined


@pytest.mark.parametrize("role, offered", [("eng", True), ("eng/ml", True), ("eng/ml/x", True),
                                           ("engx", False), ("ml", False), ("*", False)])
def test_a_reservation_is_offered_to_its_role_and_the_roles_nested_under_it(role: str, offered: bool) -> None:
    eng = Resources.from_json([_scalar("cpus", 2, reservations=_dynamic("eng"))])
    assert (eng.offerable_to(role) == eng) == offered


def test_a_refinement_is_made_of_an_ancestors_reservation_and_unreserving_gives_it_back() -> None:
    before, after = reserve([_refined()], "ops", roles=None)
    assert before == Resources.from_json([_scalar("cpus", 2, reservations=_dynamic("eng"))])
    assert after == Resources.from_json([_refined()])
    taken, back = unreserve([_refined()])
    assert (taken, back) == (after, before)   # back to eng, not unreserved
    assert unreserve(before.to_json())[1] == Resources.parse("cpus:2")


@pytest.mark.parametrize("takes_refined", [True, False])
def test_a_refinement_is_offered_only_to_a_framework_that_takes_refinements(takes_refined: bool) -> None:
    allocator = HierarchicalAllocator(seed=1)
    eng = Resources.from_json([_scalar("mem", 64, reservations=_dynamic("eng"))])
    refined = Resources.from_json([_refined()])
    allocator.add_agent("a1", eng + refined)
    allocator.add_framework("f1", "eng/ml")
    allocator.set_capabilities("f1", False, takes_refined)
    (grant,) = allocator.allocate(1.0)
    assert grant.resources == (eng + refined if takes_refined else eng)
