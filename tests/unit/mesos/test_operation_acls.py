"""The ACLs of operations on reservations and volumes, as a table: which objects an operation is authorized on
(as Mesos picks them), and who may apply it. Pure: parse_acls and Acls only. The master's refusals (403 to an
operator, OPERATION_ERROR in an ACCEPT) are in tests/security/test_authentication.py and below."""

from __future__ import annotations

from typing import Any

import pytest

from scylla_singa.mesos.master.acls import AclError, operation_objects, parse_acls


def _reserved(role: str, principal: str | None = None, **extra: Any) -> dict[str, Any]:
    reservation = {"type": "DYNAMIC", "role": role, **({"principal": principal} if principal else {})}
    return {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}, "reservations": [reservation], **extra}


def _volume(role: str, creator: str | None) -> dict[str, Any]:
    persistence = {"id": "v1", **({"principal": creator} if creator else {})}
    return {**_reserved(role, "ops"), "name": "disk", "disk": {"persistence": persistence,
                                                               "volume": {"container_path": "data", "mode": "RW"}}}


@pytest.mark.parametrize("kind, operation, objects", [
    ("RESERVE", {"resources": [_reserved("ml"), _reserved("ml"), _reserved("web")]}, ["ml", "web"]),
    ("RESERVE", {"resources": [{"name": "mem", "type": "SCALAR", "scalar": {"value": 1}, "role": "old",
                                "reservation": {"principal": "ops"}}]}, ["old"]),   # the pre-1.4 form
    ("UNRESERVE", {"resources": [_reserved("ml", "alice"), _reserved("web", "bob")]}, ["alice", "bob"]),
    ("UNRESERVE", {"resources": [_reserved("ml")]}, []),   # names no principal: nothing to check, as in Mesos
    ("CREATE", {"volumes": [_volume("ml", "alice")]}, ["ml"]),
    ("DESTROY", {"volumes": [_volume("ml", "alice"), _volume("web", None)]}, ["alice"]),
    ("GROW_VOLUME", {"volume": _volume("ml", "alice"), "addition": _reserved("ml")}, ["ml"]),
    ("SHRINK_VOLUME", {"volume": _volume("web", "alice"), "subtract": {"value": 1}}, ["web"]),
    ("RESERVE", {"resources": "not a list"}, []),
])
def test_an_operation_is_authorized_on_the_objects_mesos_names(kind: str, operation: dict, objects: list) -> None:
    assert operation_objects(kind, operation) == objects


@pytest.mark.parametrize("kind, operation, principal, refused", [
    ("RESERVE", {"resources": [_reserved("ml")]}, "ops", None),
    ("RESERVE", {"resources": [_reserved("ml"), _reserved("web")]}, "ops",
     "Not authorized: principal 'ops' may not reserve resources for role 'web' (ACL reserve_resources)"),
    ("RESERVE", {"resources": [_reserved("ml")]}, None,
     "Not authorized: an anonymous caller may not reserve resources for role 'ml' (ACL reserve_resources)"),
    ("UNRESERVE", {"resources": [_reserved("ml", "alice")]}, "ops", None),
    ("UNRESERVE", {"resources": [_reserved("ml", "bob")]}, "ops",
     "Not authorized: principal 'ops' may not unreserve resources reserved by principal 'bob' "
     "(ACL unreserve_resources)"),
    ("CREATE", {"volumes": [_volume("ml", "x")]}, "anyone", None),
    ("DESTROY", {"volumes": [_volume("ml", "alice")]}, "ops",
     "Not authorized: principal 'ops' may not destroy volumes created by principal 'alice' (ACL destroy_volumes)"),
    ("GROW_VOLUME", {"volume": _volume("web", "ops")}, "alice", None),
    ("SHRINK_VOLUME", {"volume": _volume("web", "ops")}, "ops",
     "Not authorized: principal 'ops' may not shrink volumes of role 'web' (ACL resize_volume)"),
])
def test_who_may_apply_an_operation(kind: str, operation: dict, principal: str | None, refused: str | None) -> None:
    acls = parse_acls({
        "permissive": False,
        "reserve_resources": [{"principals": ["ops"], "roles": ["ml"]}],
        "unreserve_resources": [{"principals": ["ops"], "reserver_principals": ["ops", "alice"]}],
        "create_volumes": [{"principals": "ANY", "roles": ["ml"]}],
        "destroy_volumes": [{"principals": ["ops"], "creator_principals": ["ops"]}],
        "resize_volume": [{"principals": ["alice"], "roles": "ANY"}],
    }, "acls.yaml")
    assert acls.operation_refusal(kind, operation, principal) == refused


def test_a_permissive_file_without_rules_allows_every_operation() -> None:
    acls = parse_acls({}, "acls.yaml")
    assert acls.operation_refusal("RESERVE", {"resources": [_reserved("ml")]}, None) is None


def test_a_rule_with_the_wrong_object_key_is_refused_clearly() -> None:
    with pytest.raises(AclError, match=r"acls.yaml: reserve_resources\[0\]: expected \{principals, roles\}"):
        parse_acls({"reserve_resources": [{"principals": ["ops"], "users": ["x"]}]}, "acls.yaml")
