"""Bad calls and bad tasks get Mesos's answers, and the master keeps serving."""

from __future__ import annotations

import requests

import pytest

from tests.support.mesos_framework import scalar, task_info

API = "/api/v1/scheduler"


def test_http_errors_have_mesos_codes_and_texts(cluster, raw) -> None:
    m = cluster(1)
    url = f"http://{m.master_address}{API}"
    sub = raw(m.master_address)
    fid = {"value": sub.framework_id}
    cases = [
        ("bad-json", dict(data=b"{nope", headers={"Content-Type": "application/json"}), 400,
         "Failed to parse body into JSON"),
        ("unknown-call", dict(json={"type": "FLY", "framework_id": fid}), 400, "Expecting 'type' to be present"),
        ("missing-type", dict(json={"framework_id": fid}), 400, "type"),
        ("no-stream-id", dict(json={"type": "REVIVE", "framework_id": fid}), 400,
         "The stream ID '' included in this request didn't match"),
        ("wrong-stream-id", dict(json={"type": "REVIVE", "framework_id": fid},
                                 headers={"Mesos-Stream-Id": "bogus"}), 400, "didn't match the stream ID"),
        ("unknown-framework", dict(json={"type": "REVIVE", "framework_id": {"value": "nope"}},
                                   headers={"Mesos-Stream-Id": sub.stream_id}), 400, "Framework cannot be found"),
        ("missing-payload", dict(json={"type": "DECLINE", "framework_id": fid},
                                 headers={"Mesos-Stream-Id": sub.stream_id}), 400, "Expecting 'decline'"),
        ("no-framework-id", dict(json={"type": "REVIVE"}, headers={"Mesos-Stream-Id": sub.stream_id}), 400,
         "Expecting 'framework_id'"),
        ("subscribe-with-stream-id", dict(json={"type": "SUBSCRIBE", "subscribe": {
            "framework_info": {"user": "u", "name": "x"}}}, headers={"Mesos-Stream-Id": sub.stream_id}), 400,
         "should not include the 'Mesos-Stream-Id'"),
        ("subscribe-without-info", dict(json={"type": "SUBSCRIBE", "subscribe": {}}), 400, "framework_info"),
        ("protobuf-garbage", dict(data=b"x", headers={"Content-Type": "application/x-protobuf"}), 400,
         "Failed to parse body into Call protobuf"),
        ("text-plain", dict(data=b"{}", headers={"Content-Type": "text/plain"}), 415,
         "Expecting 'Content-Type' of application/json or application/x-protobuf"),
        ("wrong-json-type", dict(json={"type": "DECLINE", "framework_id": fid, "decline": {"offer_ids": 5}},
                                 headers={"Mesos-Stream-Id": sub.stream_id}), 400,
         "Failed to convert JSON into Call protobuf: Not expecting a JSON number for field 'offer_ids'"),
        ("subscribe-accepts-xml", dict(json={"type": "SUBSCRIBE", "subscribe": {
            "framework_info": {"user": "u", "name": "x"}}}, headers={"Accept": "application/xml"}), 406,
         "Expecting 'Accept' to allow 'application/x-protobuf' or 'application/json'"),
    ]
    for name, kw, status, text in cases:
        r = requests.post(url, timeout=10, **kw)
        assert (r.status_code, text in r.text) == (status, True), f"{name}: {r.status_code} {r.text!r}"
    wrong_method = requests.get(url, timeout=10)
    assert (wrong_method.status_code, wrong_method.headers["Allow"]) == (405, "POST")
    ok = sub.call({"type": "REVIVE", "framework_id": fid})
    assert ok.status_code == 202 and ok.content == b"" and ok.headers["Content-Length"] == "0"
    # Mesos checks Accept on SUBSCRIBE only: a call that answers nothing accepts anything
    assert sub.call({"type": "REVIVE", "framework_id": fid}, Accept="application/xml").status_code == 202
    assert requests.get(f"http://{m.master_address}/health", timeout=10).status_code == 200


@pytest.mark.parametrize("uid,text", [
    ("!!", "Failed to convert JSON into Call protobuf: Failed to base64 decode bytes field 'uuid': "
           "Invalid character '!'"),
    ("AAAA", "Failed to validate scheduler::Call: Not a valid UUID"),
], ids=["not-base64", "three-bytes"])
def test_acknowledge_with_a_bad_uuid_is_400(cluster, raw, uid, text) -> None:
    m = cluster(1)
    sub = raw(m.master_address)
    r = sub.call({"type": "ACKNOWLEDGE", "framework_id": {"value": sub.framework_id},
                  "acknowledge": {"agent_id": {"value": "a"}, "task_id": {"value": "t"}, "uuid": uid}})
    assert (r.status_code, r.text) == (400, text)


def _launch_and_get(f, offer_ids, task, state):
    f.driver.acceptOffers(offer_ids, [{"type": "LAUNCH", "launch": {"task_infos": [task]}}],
                          filters={"refuse_seconds": 0})
    return f.wait_state(task["task_id"]["value"], state)


@pytest.mark.parametrize("mutate,state,reason,text", [
    (lambda t, o: t.update(resources=[scalar("cpus", 99), scalar("mem", 32)]), "TASK_ERROR",
     "REASON_TASK_INVALID", "is more than available"),
    (lambda t, o: t.update(container={"type": "DOCKER", "docker": {"image": "x", "network": "USER"}}),
     "TASK_ERROR", "REASON_TASK_INVALID", "network_infos"),
    (lambda t, o: t.update(container={"type": "DOCKER", "docker": {"image": "x", "privileged": True}}),
     "TASK_ERROR", "REASON_TASK_INVALID", "privileged"),
    (lambda t, o: t.update(container={"type": "DOCKER", "docker": {
        "image": "x", "parameters": [{"key": "cap-add", "value": "ALL"}]}}),
     "TASK_ERROR", "REASON_TASK_INVALID", "cap-add"),
    (lambda t, o: t.pop("command"), "TASK_ERROR", "REASON_TASK_INVALID", "CommandInfo"),
    (lambda t, o: t.update(agent_id={"value": "elsewhere"}), "TASK_ERROR", "REASON_TASK_INVALID", "agent"),
], ids=["more-than-offered", "user-network-without-name", "privileged", "cap-add-parameter", "no-command",
        "wrong-agent"])
def test_invalid_tasks_get_task_error(cluster, framework, mutate, state, reason, text) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"])
    mutate(task, offer)
    status = _launch_and_get(f, [offer["id"]], task, state)
    assert status["reason"] == reason and text in status["message"], status
    assert "uuid" not in status
    f.take_offer()  # the offer's resources came back and the master still serves


def test_offer_used_twice_unknown_or_duplicated_gives_task_lost(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    ok = task_info(offer["agent_id"], cpus=1)
    _launch_and_get(f, [offer["id"]], ok, "TASK_RUNNING")
    again = task_info(offer["agent_id"], cpus=1)
    status = _launch_and_get(f, [offer["id"]], again, "TASK_LOST")
    assert status["reason"] == "REASON_INVALID_OFFERS" and "no longer valid" in status["message"]
    nxt = f.take_offer()
    dup = task_info(offer["agent_id"], cpus=1)
    status = _launch_and_get(f, [nxt["id"], nxt["id"]], dup, "TASK_LOST")
    assert "Duplicate offer" in status["message"]


def test_duplicate_task_id_is_an_error(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    first = task_info(offer["agent_id"], task_id="same", cpus=1)
    _launch_and_get(f, [offer["id"]], first, "TASK_RUNNING")
    nxt = f.take_offer()
    n = len(f.sched.updates)
    f.driver.launchTasks(nxt["id"], [task_info(nxt["agent_id"], task_id="same", cpus=1)])
    status = f.sched.wait(lambda: next((u for u in f.sched.updates[n:] if u["state"] == "TASK_ERROR"), None),
                          what="TASK_ERROR")
    assert "duplicate ID" in status["message"]
    assert f.sched.states("same").count("TASK_RUNNING") == 1


def test_a_framework_cannot_use_or_kill_another_frameworks_offers_and_tasks(cluster, framework) -> None:
    m = cluster(1)
    a = framework(m.master_address, name="a")
    offer = a.take_offer()
    mine = task_info(offer["agent_id"], cpus=1)
    a.launch(offer, [mine])
    a.wait_state(mine["task_id"]["value"], "TASK_RUNNING")
    b = framework(m.master_address, name="b")
    theirs = task_info(offer["agent_id"], cpus=1)
    status = _launch_and_get(b, [offer["id"]], theirs, "TASK_LOST")
    assert status["reason"] == "REASON_INVALID_OFFERS"
    b.driver.killTask(mine["task_id"])
    lost = b.wait_state(mine["task_id"]["value"], "TASK_LOST")
    assert lost["reason"] == "REASON_RECONCILIATION"
    b.driver.reconcileTasks([])
    a.driver.reconcileTasks([{"task_id": mine["task_id"]}])
    a.sched.wait(lambda: [u for u in a.sched.updates if u.get("reason") == "REASON_RECONCILIATION"
                          and u["state"] == "TASK_RUNNING"], what="a's task still running")
    assert mine["task_id"]["value"] not in {u["task_id"]["value"] for u in b.sched.updates
                                            if u["state"] != "TASK_LOST"}
