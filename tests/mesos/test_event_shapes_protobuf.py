"""Every event our master sends today is a Mesos v1 scheduler Event, field for field.

Why: when the master also speaks protobuf (issue 15, phase 2), its events
(dicts today) are encoded through the Mesos messages; a field that Mesos's
Event does not have would be dropped silently. This pins the JSON shapes
now: each event of a task's life strict-decodes into scheduler.Event and
comes back unchanged from its protobuf bytes.
"""

from __future__ import annotations

from typing import Any

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import SCHEDULER, MediaType
from scylla_singa.mesos.api.proto import scheduler_pb2
from tests.support.mesos_framework import task_info


def without_empty_lists(value: Any) -> Any:
    """Our master writes some empty repeated fields (an offer's `attributes: []`); protobuf, and
    Mesos's generic JSON writer, leave them out. Not a shape difference."""
    if isinstance(value, dict):
        return {k: without_empty_lists(v) for k, v in value.items() if v != []}
    if isinstance(value, list):
        return [without_empty_lists(v) for v in value]
    return value


def assert_is_a_mesos_event(event: dict[str, Any]) -> None:
    message = codec.from_dict(scheduler_pb2.Event(), event, strict=True)
    wire = codec.encode_event(SCHEDULER, event, MediaType.PROTOBUF)
    assert wire == message.SerializeToString()
    back = scheduler_pb2.Event()
    back.ParseFromString(wire)
    assert codec.to_dict(back) == without_empty_lists(event)


def test_events_of_a_task_life_are_mesos_events(cluster, raw) -> None:
    m = cluster(1, heartbeat_interval=0.5)
    sub = raw(m.master_address, {"type": "SUBSCRIBE", "subscribe": {"framework_info": {
        "user": "u", "name": "shapes", "roles": ["r"], "capabilities": [{"type": "MULTI_ROLE"}]}}})
    assert sub.framework_id
    offers = sub.next_of("OFFERS")
    assert_is_a_mesos_event(offers)
    offer = offers["offers"]["offers"][0]
    task = task_info(offer["agent_id"], cpus=0.1, mem=32)
    task["command"]["value"] = "sleep 0"
    for resource in task["resources"]:   # a MULTI_ROLE framework hands back the offer's allocation_info
        resource["allocation_info"] = offer["allocation_info"]
    answer = sub.call({"type": "ACCEPT", "framework_id": {"value": sub.framework_id},
                       "accept": {"offer_ids": [offer["id"]],
                                  "operations": [{"type": "LAUNCH", "launch": {"task_infos": [task]}}]}})
    assert answer.status_code == 202, answer.text
    states = []
    while not states or states[-1] != "TASK_FINISHED":
        update = sub.next_of("UPDATE")
        assert_is_a_mesos_event(update)
        status = update["update"]["status"]
        states.append(status["state"])
        sub.call({"type": "ACKNOWLEDGE", "framework_id": {"value": sub.framework_id},
                  "acknowledge": {"agent_id": status["agent_id"], "task_id": status["task_id"],
                                  "uuid": status["uuid"]}})
    assert states[-1] == "TASK_FINISHED"
    assert_is_a_mesos_event(sub.next_of("HEARTBEAT"))
