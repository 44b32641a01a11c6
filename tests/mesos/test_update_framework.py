"""UPDATE_FRAMEWORK as Mesos 1.12 does it: the FrameworkInfo changes (name, roles, failover timeout), a role
change rescinds the old role's offers and offers come in the new one, suppressed_roles suppresses, and
principal, user and checkpoint cannot change (400)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest


MULTI_ROLE = [{"type": "MULTI_ROLE"}]


def _get(master: str, path: str) -> Any:
    return json.load(urllib.request.urlopen(f"http://{master}{path}", timeout=10))


def _update(sub: Any, info: dict[str, Any], **extra: Any) -> Any:
    fw = {"value": sub.framework_id}
    return sub.call({"type": "UPDATE_FRAMEWORK", "framework_id": fw,
                     "update_framework": {"framework_info": {**info, "id": fw}, **extra}})


@pytest.fixture
def subscribed(cluster, raw) -> tuple[Any, Any, dict[str, Any]]:
    m = cluster(1)
    info = {"user": "u", "name": "before", "roles": ["analytics"], "capabilities": MULTI_ROLE}
    sub = raw(m.master_address, {"type": "SUBSCRIBE", "subscribe": {"framework_info": info}})
    return m, sub, info


def test_a_role_change_rescinds_the_old_offers_and_offers_come_in_the_new_role(subscribed) -> None:
    m, sub, info = subscribed
    first = sub.next_of(("OFFERS",))["offers"]["offers"][0]
    assert first["allocation_info"] == {"role": "analytics"}

    answer = _update(sub, {**info, "name": "after", "roles": ["training"], "failover_timeout": 120.0})
    assert answer.status_code == 200 and answer.content == b"", answer.text

    rescinded = sub.next_of(("RESCIND",))
    assert rescinded["rescind"]["offer_id"] == first["id"]
    again = sub.next_of(("OFFERS",))["offers"]["offers"][0]
    assert again["allocation_info"] == {"role": "training"}
    assert again["resources"][0]["allocation_info"] == {"role": "training"}

    (framework,) = _get(m.master_address, "/master/frameworks")["frameworks"]
    assert (framework["name"], framework["roles"], framework["failover_timeout"]) == ("after", ["training"], 120.0)
    roles = {r["name"]: r for r in _get(m.master_address, "/master/roles")["roles"]}
    assert sub.framework_id in roles["training"]["frameworks"]
    assert "analytics" not in roles or sub.framework_id not in roles["analytics"]["frameworks"]


def test_suppressed_roles_suppress_and_an_update_without_them_offers_again(subscribed) -> None:
    m, sub, info = subscribed
    offer = sub.next_of(("OFFERS",))["offers"]["offers"][0]
    assert sub.call({"type": "DECLINE", "framework_id": {"value": sub.framework_id},
                     "decline": {"offer_ids": [offer["id"]], "filters": {"refuse_seconds": 0.0}}}).status_code == 202
    assert _update(sub, info, suppressed_roles=["analytics"]).status_code == 200
    key = f"master/frameworks/before/{sub.framework_id}/roles/analytics/suppressed"
    assert _get(m.master_address, "/metrics/snapshot")[key] == 1.0

    assert _update(sub, info).status_code == 200
    assert _get(m.master_address, "/metrics/snapshot")[key] == 0.0
    assert sub.next_of(("OFFERS",))["offers"]["offers"][0]["agent_id"] == offer["agent_id"]


@pytest.mark.parametrize("change, message", [
    ({"user": "someone-else"}, "Updating 'FrameworkInfo.user' is unsupported; attempted to update from 'u' to "
                               "'someone-else'"),
    ({"checkpoint": True}, "Updating 'FrameworkInfo.checkpoint' is unsupported; attempted to update from 'false' "
                           "to 'true'"),
    ({"principal": "intruder"}, "Changing framework's principal is not allowed."),
])
def test_what_cannot_change_is_refused_with_400_and_nothing_changes(subscribed, change, message) -> None:
    m, sub, info = subscribed
    answer = _update(sub, {**info, "name": "changed", **change})
    assert answer.status_code == 400
    assert answer.text == f"FrameworkInfo update is not valid: {message}"
    (framework,) = _get(m.master_address, "/master/frameworks")["frameworks"]
    assert (framework["name"], framework["user"], framework["checkpoint"]) == ("before", "u", False)
