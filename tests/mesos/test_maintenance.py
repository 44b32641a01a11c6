"""Maintenance through the operator API on a running master with simulated agents: a schedule makes a machine
DRAINING (its offers carry the unavailability, frameworks with tasks there get an inverse offer and their
answer shows in the status), START_MAINTENANCE takes it DOWN (its agent removed, its task lost, no
registration while DOWN), STOP_MAINTENANCE brings it back; bad calls are refused with Mesos's texts."""

from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

import requests

from scylla_singa.common.waiting import wait_until


def _get(master: str, path: str) -> Any:
    return json.load(urllib.request.urlopen(f"http://{master}{path}", timeout=10))


def _operator(master: str, body: dict[str, Any]) -> requests.Response:
    return requests.post(f"http://{master}/api/v1", json=body, timeout=10)


def _hostnames(master: str) -> list[str]:
    return sorted(a["hostname"] for a in _get(master, "/master/slaves")["slaves"])


def test_a_machine_drains_goes_down_and_comes_back(cluster, raw) -> None:
    m = cluster(2)
    master = m.master_address
    sub = raw(master)
    fw = {"value": sub.framework_id}
    offers = sub.next_of(("OFFERS",))["offers"]["offers"]
    offer = next(o for o in offers if o["hostname"] == "agent-0")
    task = {"name": "long", "task_id": {"value": "long-1"}, "agent_id": offer["agent_id"],
            "command": {"value": "sleep 1000"},
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}}]}
    assert sub.call({"type": "ACCEPT", "framework_id": fw, "accept": {
        "offer_ids": [offer["id"]], "operations": [{"type": "LAUNCH", "launch": {"task_infos": [task]}}],
        "filters": {"refuse_seconds": 0}}}).status_code == 202
    machine = {"hostname": "agent-0", "ip": "127.0.0.1"}
    start_ns = int((time.time() + 3600) * 1e9)
    unavailability = {"start": {"nanoseconds": start_ns}, "duration": {"nanoseconds": 3600 * 10 ** 9}}
    schedule = {"windows": [{"machine_ids": [machine], "unavailability": unavailability}]}
    answer = _operator(master, {"type": "UPDATE_MAINTENANCE_SCHEDULE",
                                "update_maintenance_schedule": {"schedule": schedule}})
    assert (answer.status_code, answer.content) == (200, b""), answer.text

    inverse = sub.next_of(("INVERSE_OFFERS",))["inverse_offers"]["inverse_offers"]
    assert [(i["agent_id"], i["unavailability"]) for i in inverse] == [(offer["agent_id"], unavailability)]
    status = _operator(master, {"type": "GET_MAINTENANCE_STATUS"}).json()["get_maintenance_status"]["status"]
    [draining] = status["draining_machines"]
    assert draining["id"] == machine and [s["status"] for s in draining["statuses"]] == ["UNKNOWN"]
    assert sub.call({"type": "DECLINE_INVERSE_OFFERS", "framework_id": fw, "decline_inverse_offers": {
        "inverse_offer_ids": [inverse[0]["id"]]}}).status_code == 202
    status = _get(master, "/maintenance/status")
    assert [s["status"] for s in status["draining_machines"][0]["statuses"]] == ["DECLINE"]
    assert _get(master, "/maintenance/schedule")["windows"][0]["machine_ids"] == [machine]

    refused = _operator(master, {"type": "STOP_MAINTENANCE", "stop_maintenance": {"machines": [machine]}})
    assert (refused.status_code, refused.text) == (400, "Machine '{\"hostname\":\"agent-0\",\"ip\":\"127.0.0.1\"}'"
                                                        " is not in DOWN mode and cannot be brought up")
    assert _operator(master, {"type": "START_MAINTENANCE",
                              "start_maintenance": {"machines": [machine]}}).status_code == 200
    lost = sub.next_of(("UPDATE",))["update"]["status"]
    while lost["state"] in ("TASK_STARTING", "TASK_RUNNING"):   # the task's updates from before
        lost = sub.next_of(("UPDATE",))["update"]["status"]
    assert (lost["task_id"], lost["state"]) == (task["task_id"], "TASK_LOST") and "Machine DOWN" in lost["message"]
    wait_until(lambda: _hostnames(master) == ["agent-1"], 10, "agent-0 removed")
    status = _operator(master, {"type": "GET_MAINTENANCE_STATUS"}).json()["get_maintenance_status"]["status"]
    assert status["down_machines"] == [machine] and status.get("draining_machines", []) == []

    removing = _operator(master, {"type": "UPDATE_MAINTENANCE_SCHEDULE",
                                  "update_maintenance_schedule": {"schedule": {"windows": []}}})
    assert removing.status_code == 400 and "is deactivated and cannot be removed from the schedule" in removing.text

    assert _operator(master, {"type": "STOP_MAINTENANCE",
                              "stop_maintenance": {"machines": [machine]}}).status_code == 200
    assert _get(master, "/maintenance/schedule")["windows"] == []
    wait_until(lambda: _hostnames(master) == ["agent-0", "agent-1"], 20, "agent-0 registered again")


def test_maintenance_calls_refuse_what_mesos_refuses(cluster) -> None:
    m = cluster(1)
    master = m.master_address
    nowhere = {"hostname": "nowhere"}
    cases = [
        ({"type": "START_MAINTENANCE", "start_maintenance": {"machines": [nowhere]}},
         "Machine '{\"hostname\":\"nowhere\"}' is not part of a maintenance schedule"),
        ({"type": "START_MAINTENANCE", "start_maintenance": {"machines": [{}]}},
         "Both 'hostname' and 'ip' for a machine are empty"),
        ({"type": "UPDATE_MAINTENANCE_SCHEDULE", "update_maintenance_schedule": {"schedule": {"windows": [
            {"machine_ids": [], "unavailability": {"start": {"nanoseconds": 1}}}]}}},
         "List of machines in the maintenance window is empty"),
        ({"type": "UPDATE_MAINTENANCE_SCHEDULE", "update_maintenance_schedule": {"schedule": {"windows": [
            {"machine_ids": [nowhere], "unavailability": {"start": {"nanoseconds": 1}}},
            {"machine_ids": [nowhere], "unavailability": {"start": {"nanoseconds": 2}}}]}}},
         "Machine '{\"hostname\":\"nowhere\"}' appears more than once in the schedule"),
        ({"type": "UPDATE_MAINTENANCE_SCHEDULE", "update_maintenance_schedule": {"schedule": {"windows": [
            {"machine_ids": [nowhere], "unavailability": {"start": {"nanoseconds": 1},
                                                          "duration": {"nanoseconds": -5}}}]}}},
         "Unavailability 'duration' is negative"),
    ]
    for body, text in cases:
        answer = _operator(master, body)
        assert (answer.status_code, answer.text) == (400, text), body
    assert _get(master, "/maintenance/schedule") == {"windows": []}
