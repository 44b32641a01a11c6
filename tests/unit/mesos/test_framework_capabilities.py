"""A framework's capabilities as the master reads them (FrameworkRec.has_capability, asked per offer).

The names are kept with the list they came from (issue 17); these check they
follow every way a framework's info changes: UPDATE_FRAMEWORK replaces the
whole info, a recovered framework's info gains a capabilities list.
"""

from __future__ import annotations

from scylla_singa.mesos.master.master_records import FrameworkRec
from scylla_singa.mesos.master.registration_lifecycles import FrameworkLifecycle


def _framework(info: dict) -> FrameworkRec:
    return FrameworkRec("fw1", info, "*", FrameworkLifecycle("NEW", "framework fw1"), 0.0)


def test_capabilities_follow_a_replaced_info() -> None:
    fw = _framework({"name": "f", "capabilities": [{"type": "MULTI_ROLE"}]})
    assert fw.has_capability("MULTI_ROLE") and not fw.has_capability("RESERVATION_REFINEMENT")
    fw.info = {"name": "f", "capabilities": [{"type": "RESERVATION_REFINEMENT"}]}   # UPDATE_FRAMEWORK
    assert fw.has_capability("RESERVATION_REFINEMENT") and not fw.has_capability("MULTI_ROLE")
    fw.info = {"name": "f"}
    assert not fw.has_capability("RESERVATION_REFINEMENT")


def test_capabilities_follow_a_list_put_into_the_same_info() -> None:
    fw = _framework({"name": "f"})
    assert not fw.has_capability("MULTI_ROLE") and fw.allocation_role is None
    fw.info["capabilities"] = [{"type": "MULTI_ROLE"}, {}]   # an entry without a type names nothing
    assert fw.has_capability("MULTI_ROLE") and fw.allocation_role == "*"
    assert not fw.has_capability("")
