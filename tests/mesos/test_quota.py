"""Quota through the operator API on a running master: UPDATE_QUOTA limits and guarantees shape the offers
frameworks get, GET_QUOTA, `/quota`, `/roles` and the metrics show them, and bad updates are refused with
Mesos's status and text, changing nothing."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import requests

from scylla_singa.common.waiting import Deadline
from tests.support.mesos_framework import task_info


def _get(master: str, path: str) -> Any:
    return json.load(urllib.request.urlopen(f"http://{master}{path}", timeout=10))


def _operator(master: str, body: dict[str, Any]) -> requests.Response:
    return requests.post(f"http://{master}/api/v1", json=body, timeout=10)


def _update(master: str, *configs: dict[str, Any], force: bool = False) -> requests.Response:
    body: dict[str, Any] = {"quota_configs": list(configs)}
    if force:
        body["force"] = True
    return _operator(master, {"type": "UPDATE_QUOTA", "update_quota": body})


def _config(role: str, guarantees: dict | None = None, limits: dict | None = None) -> dict[str, Any]:
    return {"role": role, "guarantees": {k: {"value": v} for k, v in (guarantees or {}).items()},
            "limits": {k: {"value": v} for k, v in (limits or {}).items()}}


def _subscribe(raw: Any, master: str, role: str) -> Any:
    info = {"user": "u", "name": f"in-{role}", "role": role}
    return raw(master, {"type": "SUBSCRIBE", "subscribe": {"framework_info": info}})


def _offered_cpus(sub: Any, want: float, timeout: float = 10.0) -> float:
    """CPUs offered to `sub` (none given back) until they reach `want` or the deadline passes."""
    got, deadline = 0.0, Deadline(timeout)
    while got < want - 1e-9 and not deadline.passed():
        event = sub.next_event()
        for offer in (event.get("offers") or {}).get("offers") or ():
            got += sum(r["scalar"]["value"] for r in offer["resources"] if r["name"] == "cpus")
    return got


AGENTS = [{"resources": "cpus:4;mem:1024;disk:100"}, {"resources": "cpus:4;mem:1024;disk:100"}]


def test_a_limit_caps_what_the_role_is_offered_and_is_shown_everywhere(cluster, raw) -> None:
    m = cluster(AGENTS)
    answer = _update(m.master_address, _config("capped", limits={"cpus": 3}))
    assert (answer.status_code, answer.content) == (200, b"")
    sub = _subscribe(raw, m.master_address, "capped")
    assert _offered_cpus(sub, 3.0) == 3.0   # of the cluster's 8: the limit, and no more arrives meanwhile

    status = _operator(m.master_address, {"type": "GET_QUOTA"}).json()["get_quota"]["status"]
    assert status == {"infos": [{"role": "capped"}],
                      "configs": [{"role": "capped", "limits": {"cpus": {"value": 3.0}}}]}
    assert _get(m.master_address, "/quota") == status
    (role,) = [r for r in _get(m.master_address, "/roles")["roles"] if r["name"] == "capped"]
    assert role["quota"]["limit"] == {"cpus": 3.0} and role["quota"]["guarantee"] == {}
    metrics = _get(m.master_address, "/metrics/snapshot")
    assert metrics["allocator/mesos/quota/roles/capped/resources/cpus/limit"] == 3.0


def test_a_guarantee_keeps_its_headroom_from_other_roles_until_its_role_comes(cluster, raw) -> None:
    m = cluster(AGENTS)
    assert _update(m.master_address, _config("prod", guarantees={"cpus": 6})).status_code == 200
    other = _subscribe(raw, m.master_address, "batch")
    assert _offered_cpus(other, 2.0) == 2.0   # 8 CPUs less prod's 6 unmet
    prod = _subscribe(raw, m.master_address, "prod")
    assert _offered_cpus(prod, 6.0) == 6.0


def test_bad_updates_are_refused_as_mesos_refuses_them_and_change_nothing(cluster, raw) -> None:
    m = cluster(AGENTS)
    address = m.master_address
    cases = [
        (_update(address, _config("a", guarantees={"cpus": 5}, limits={"cpus": 2})),
         "Invalid QuotaConfig: 'QuotaConfig.guarantees' { cpus: 5 } is not contained within the "
         "'QuotaConfig.limits' { cpus: 2 }"),
        (_update(address, _config("eng/ml", limits={"cpus": 1})),
         "Updating quota on nested role 'eng/ml' is not supported yet"),
        (_update(address, _config("big", guarantees={"cpus": 9})),
         "Invalid QuotaConfig: total quota guarantees 'cpus:9' exceed cluster capacity "
         "'cpus:8; disk:200; mem:2048' (use 'force' flag to bypass this check)"),
        (_operator(address, {"type": "REMOVE_QUOTA", "remove_quota": {"role": "none"}}),
         "Failed to remove quota: Role 'none' has no quota set"),
    ]
    for answer, text in cases:
        assert (answer.status_code, answer.text) == (400, text)
    assert _operator(address, {"type": "GET_QUOTA"}).json()["get_quota"]["status"] == {}
    assert _update(address, _config("big", guarantees={"cpus": 9}), force=True).status_code == 200
    assert _update(address, _config("big")).status_code == 200   # no guarantee, no limit (still listed, as in Mesos)
    assert _operator(address, {"type": "GET_QUOTA"}).json()["get_quota"]["status"] == {
        "infos": [{"role": "big"}], "configs": [{"role": "big"}]}

    request = {"role": "legacy", "guarantee": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}}]}
    assert _operator(address, {"type": "SET_QUOTA", "set_quota": {"quota_request": request}}).status_code == 200
    again = _operator(address, {"type": "SET_QUOTA", "set_quota": {"quota_request": request}})
    assert again.status_code == 400 and "already has quota" in again.text
    assert _operator(address, {"type": "REMOVE_QUOTA", "remove_quota": {"role": "legacy"}}).status_code == 200
    assert [c["role"] for c in _operator(address, {"type": "GET_QUOTA"}).json()["get_quota"]["status"]["configs"]] \
        == ["big"]


def test_a_limit_below_what_the_role_holds_needs_force(cluster, framework) -> None:
    m = cluster(AGENTS)
    f = framework(m.master_address, role="busy")
    offer = f.take_offer()
    task = task_info(offer["agent_id"], cpus=2)
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    refused = _update(m.master_address, _config("busy", limits={"cpus": 1}))
    assert refused.status_code == 400 and "Role 'busy' is already consuming 'cpus:2" in refused.text
    assert _update(m.master_address, _config("busy", limits={"cpus": 1}), force=True).status_code == 200


def test_quotas_weights_and_maintenance_outlive_a_master_restart(cluster, raw) -> None:
    """What operators set is in the master's store (Mesos's registry keeps it): a restarted master still caps
    the role at its limit, weighs its roles and keeps its maintenance schedule and DOWN machines."""
    m = cluster(AGENTS)
    assert _update(m.master_address, _config("ml", {"cpus": 1}, {"cpus": 2})).status_code == 200
    assert _operator(m.master_address, {"type": "UPDATE_WEIGHTS", "update_weights": {
        "weight_infos": [{"role": "ml", "weight": 3.0}]}}).status_code == 200
    window = {"machine_ids": [{"hostname": "elsewhere"}, {"hostname": "gone-for-now"}],
              "unavailability": {"start": {"nanoseconds": 4_000_000_000_000_000_000}}}
    assert _operator(m.master_address, {"type": "UPDATE_MAINTENANCE_SCHEDULE", "update_maintenance_schedule": {
        "schedule": {"windows": [window]}}}).status_code == 200
    assert _operator(m.master_address, {"type": "START_MAINTENANCE", "start_maintenance": {
        "machines": [{"hostname": "gone-for-now"}]}}).status_code == 200
    before = {kind: _operator(m.master_address, {"type": kind}).json() for kind in
              ("GET_QUOTA", "GET_WEIGHTS", "GET_MAINTENANCE_SCHEDULE", "GET_MAINTENANCE_STATUS")}
    m.restart_master()
    after = {kind: _operator(m.master_address, {"type": kind}).json() for kind in before}
    assert after == before
    assert after["GET_MAINTENANCE_STATUS"]["get_maintenance_status"]["status"]["down_machines"] == [
        {"hostname": "gone-for-now"}]
    assert {"role": "ml", "weight": 3.0} in after["GET_WEIGHTS"]["get_weights"]["weight_infos"]
    sub = _subscribe(raw, m.master_address, "ml")   # the limit still caps what the role is offered
    assert _offered_cpus(sub, 2.0) == 2.0
