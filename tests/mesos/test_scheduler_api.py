"""pymesos's real driver against the embedded master with simulated agents: every call and event."""

from __future__ import annotations

import base64
import json
import time
import urllib.request

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.agent.agent_core import AgentCore
from scylla_singa.mesos.agent.task_runner import AgentTask
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from tests.support.mesos_framework import TestFramework, scalar, task_info


def _state(master: str) -> dict:
    return json.load(urllib.request.urlopen(f"http://{master}/master/state", timeout=10))


def test_subscribe_gets_offers_from_two_agents_with_attributes_and_custom_scalars(cluster, framework) -> None:
    m = cluster([{"resources": "cpus:4;mem:8192;ports:[31000-31005];net_bw:1000;gpus_ids:{a,b}",
                  "attributes": "rack:r1;zone:a;speed:2.5", "hostname": "h1"},
                 {"resources": "cpus:2;mem:4096", "attributes": "rack:r2", "hostname": "h2"}])
    f = framework(m.master_address)
    offers = f.sched.wait(lambda: len({o["hostname"] for o in f.sched.all_offers}) == 2 and f.sched.all_offers,
                          what="offers from both agents")
    h1 = next(o for o in offers if o["hostname"] == "h1")
    res = {r["name"]: r for r in h1["resources"]}
    assert res["cpus"]["scalar"]["value"] == 4 and res["net_bw"]["scalar"]["value"] == 1000
    assert res["ports"]["ranges"]["range"] == [{"begin": 31000, "end": 31005}]
    assert res["gpus_ids"]["set"]["item"] == ["a", "b"]
    assert {"name": "rack", "type": "TEXT", "text": {"value": "r1"}} in h1["attributes"]
    assert {"name": "speed", "type": "SCALAR", "scalar": {"value": 2.5}} in h1["attributes"]
    assert h1["framework_id"]["value"] == f.id
    assert f.sched.heartbeats >= 1  # the first HEARTBEAT follows SUBSCRIBED


@pytest.mark.parametrize("command,final,reason", [
    ("exit 0", "TASK_FINISHED", None),
    ("sleep 0.2", "TASK_FINISHED", None),
    ("exit 3", "TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED"),
], ids=["exit-0-finishes", "sleep-finishes", "exit-3-fails"])
def test_simulated_task_runs_through_its_states(cluster, framework, command, final, reason) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], command=command)
    f.launch(offer, [task])
    status = f.wait_state(task["task_id"]["value"], final)
    assert f.sched.states(task["task_id"]["value"]) == ["TASK_STARTING", "TASK_RUNNING", final]
    assert status.get("reason") == reason
    assert status["agent_id"] == offer["agent_id"] and status["uuid"]


def test_kill_ends_a_running_task_with_killed_and_frees_its_resources(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], cpus=4, mem=8192)
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    f.driver.killTask(task["task_id"])
    f.wait_state(task["task_id"]["value"], "TASK_KILLED")
    again = f.take_offer(lambda o: o["agent_id"] == offer["agent_id"])
    assert {r["name"]: r.get("scalar", {}).get("value") for r in again["resources"]}["cpus"] == 4


def test_decline_filter_keeps_the_agent_away_and_revive_brings_it_back(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    first = f.take_offer()
    declined_at = time.monotonic()
    f.driver.declineOffer(first["id"], filters={"refuse_seconds": 1.0})
    f.take_offer(timeout=5)
    waited = time.monotonic() - declined_at
    assert 0.95 <= waited < 3, f"the agent came back after {waited:.2f}s"
    f.driver.declineOffer(f.sched.all_offers[-1]["id"], filters={"refuse_seconds": 3600})
    revived_at = time.monotonic()
    f.driver.reviveOffers()
    f.take_offer(timeout=5)
    assert time.monotonic() - revived_at < 2


def test_suppress_stops_offers_until_revive(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    seen = len(f.sched.all_offers)  # counted before the decline: its own allocation round is one to watch
    f.driver.suppressOffers()
    f.driver.declineOffer(offer["id"], filters={"refuse_seconds": 0})  # the agent is free and unfiltered
    _wait_allocation_rounds(m.master_address, 3)  # each round could have offered the agent
    assert len(f.sched.all_offers) == seen
    f.driver.reviveOffers()
    f.take_offer(timeout=5)


def _allocation_runs(master: str) -> int:
    snapshot = json.load(urllib.request.urlopen(f"http://{master}/metrics/snapshot", timeout=10))
    return int(snapshot["allocator/mesos/allocation_runs"])


def _wait_allocation_rounds(master: str, n: int, timeout: float = 10.0) -> None:
    """Return once the master has run `n` more allocation rounds than now (a round is when offers are made)."""
    target = _allocation_runs(master) + n
    wait_until(lambda: _allocation_runs(master) >= target, timeout, f"{n} more allocation rounds", interval_s=0.05)


def test_unused_part_of_an_accept_is_declined_with_the_default_five_seconds(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    f.driver.launchTasks(offer["id"], [task_info(offer["agent_id"], cpus=1, mem=64)])  # no filters: 5 s
    t0 = time.monotonic()
    nxt = f.take_offer(timeout=10)
    assert time.monotonic() - t0 >= 4.5
    assert {r["name"]: r.get("scalar", {}).get("value") for r in nxt["resources"]}["cpus"] == 3


def test_reconcile_explicit_and_implicit(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    running = task_info(offer["agent_id"])
    done = task_info(offer["agent_id"], command="exit 0")
    f.launch(offer, [running, done])
    f.wait_state(running["task_id"]["value"], "TASK_RUNNING")
    f.wait_state(done["task_id"]["value"], "TASK_FINISHED")
    n = len(f.sched.updates)
    f.driver.reconcileTasks([])
    implicit = f.sched.wait(lambda: [u for u in f.sched.updates[n:] if u.get("reason") == "REASON_RECONCILIATION"],
                            what="implicit reconciliation")
    assert [(u["task_id"]["value"], u["state"]) for u in implicit] == [(running["task_id"]["value"], "TASK_RUNNING")]
    assert "uuid" not in implicit[0]
    n = len(f.sched.updates)
    f.driver.reconcileTasks([{"task_id": running["task_id"]}, {"task_id": done["task_id"]},
                             {"task_id": {"value": "nope"}}])
    got = f.sched.wait(lambda: len(f.sched.updates) >= n + 3 and f.sched.updates[n:], what="explicit reconciliation")
    assert {(u["task_id"]["value"], u["state"]) for u in got} == {
        (running["task_id"]["value"], "TASK_RUNNING"), (done["task_id"]["value"], "TASK_FINISHED"),
        ("nope", "TASK_LOST")}


def test_framework_failover_keeps_tasks_and_the_old_stream_gets_an_error(cluster, framework) -> None:
    m = cluster(1)
    f1 = framework(m.master_address, failover_timeout=30)
    offer = f1.take_offer()
    task = task_info(offer["agent_id"])
    f1.launch(offer, [task])
    f1.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    f2 = framework(m.master_address, framework_id=f1.id)  # subscribes while f1 is still connected
    assert f2.id == f1.id
    f1.sched.wait(lambda: "Framework failed over" in f1.sched.errors, what="ERROR on the old stream")
    f1.stop(teardown=False)
    f2.driver.reconcileTasks([{"task_id": task["task_id"]}])
    status = f2.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    assert status["reason"] == "REASON_RECONCILIATION"
    fw = next(x for x in _state(m.master_address)["frameworks"] if x["id"] == f1.id)
    assert [t["state"] for t in fw["tasks"]] == ["TASK_RUNNING"]


def test_disconnected_framework_keeps_tasks_until_its_failover_timeout(cluster, framework) -> None:
    m = cluster(1)
    f1 = framework(m.master_address, failover_timeout=1.0)
    offer = f1.take_offer()
    task = task_info(offer["agent_id"])
    f1.launch(offer, [task])
    f1.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    f1.stop(teardown=False)
    wait_until(lambda: not any(x["id"] == f1.id for x in _state(m.master_address)["frameworks"]), 10,
               "the framework to be removed after its failover timeout")
    assert not m.agents[0].core.tasks or all(t.state == "TASK_KILLED" for t in m.agents[0].core.tasks.values())
    done = _state(m.master_address)["completed_frameworks"]
    assert [t["state"] for t in done[-1]["completed_tasks"]] == ["TASK_KILLED"]


def test_teardown_kills_the_frameworks_tasks(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"])
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    f.stop()  # TEARDOWN
    core = m.agents[0].core
    key = (f.id, task["task_id"]["value"])
    # Not just "gone from the agent's task table": the state the agent's task actually reached.
    ended = wait_until(lambda: (t := _agent_task(core, key)) is not None and t.state in TERMINAL_TASK_STATES and t, 10,
                       "the task to end on the agent", interval_s=0.05)
    assert ended.state == "TASK_KILLED"
    assert ended.last_status["state"] == "TASK_KILLED"
    done = next(x for x in _state(m.master_address)["completed_frameworks"] if x["id"] == f.id)
    assert [t["state"] for t in done["completed_tasks"]] == ["TASK_KILLED"]


def _agent_task(core: AgentCore, key: tuple[str, str]) -> AgentTask | None:
    """The agent's record of a task, also once it moved to the completed ones (updates acknowledged)."""
    return core.tasks.get(key) or next((t for t in list(core.completed) if t.key == key), None)


def test_custom_resources_can_be_launched_and_are_subtracted(cluster, framework) -> None:
    m = cluster([{"resources": "cpus:4;mem:4096;net_bw:1000;ports:[31000-31010]"}])
    f = framework(m.master_address)
    offer = f.take_offer()
    res = [scalar("cpus", 1), scalar("mem", 64), scalar("net_bw", 400),
           {"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": 31000, "end": 31001}]}}]
    task = task_info(offer["agent_id"], resources=res)
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    nxt = f.take_offer()
    got = {r["name"]: r for r in nxt["resources"]}
    assert got["net_bw"]["scalar"]["value"] == 600
    assert got["ports"]["ranges"]["range"] == [{"begin": 31002, "end": 31010}]


def test_an_agent_with_more_than_four_kinds_of_scalar_is_offered_and_its_tasks_run(cluster, framework) -> None:
    """The DRF sorter grows its arrays at a fifth scalar kind; it used to index the old, narrower array
    (IndexError in add_agent), so an agent with gpus and two custom scalars was never offered."""
    m = cluster([{"resources": "cpus:4;mem:4096;disk:1000;gpus:2;net_bw:1000;fpga:3"}])
    f = framework(m.master_address)
    offer = f.take_offer()
    got = {r["name"]: r["scalar"]["value"] for r in offer["resources"] if r["type"] == "SCALAR"}
    assert got == {"cpus": 4, "mem": 4096, "disk": 1000, "gpus": 2, "net_bw": 1000, "fpga": 3}
    task = task_info(offer["agent_id"], resources=[scalar("cpus", 1), scalar("mem", 64), scalar("fpga", 1),
                                                   scalar("net_bw", 100)])
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    nxt = {r["name"]: r["scalar"]["value"] for r in f.take_offer()["resources"] if r["type"] == "SCALAR"}
    assert nxt["fpga"] == 2 and nxt["net_bw"] == 900


def test_agent_that_does_not_come_back_is_removed_with_failure_and_lost_tasks(cluster, framework) -> None:
    m = cluster(2, agent_reregister_timeout=0.5)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"])
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    index = next(i for i, a in enumerate(m.agents) if a.agent_id == offer["agent_id"]["value"])
    m.stop_agent(index, kill=True)
    lost = f.wait_state(task["task_id"]["value"], "TASK_LOST")
    assert lost["reason"] == "REASON_AGENT_REMOVED"
    f.sched.wait(lambda: offer["agent_id"]["value"] in f.sched.lost_agents, what="FAILURE (slaveLost)")


def test_message_and_request_calls_are_accepted_and_the_driver_keeps_serving(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    # pymesos raises on any answer outside 2xx (and aborts its driver), so returning is the master's 202.
    f.driver.sendFrameworkMessage({"value": "no-such-executor"}, offer["agent_id"],
                                  base64.b64encode(b"hello").decode())
    f.driver.requestResources([{"agent_id": offer["agent_id"], "resources": [scalar("cpus", 1)]}])
    metrics = json.load(urllib.request.urlopen(f"http://{m.master_address}/metrics/snapshot", timeout=10))
    assert metrics["master/messages_framework_to_executor"] == 1
    assert metrics["master/messages_resource_request"] == 1
    # the same calls on the driver's own stream, to see the status code itself
    for body in ({"type": "MESSAGE", "message": {"agent_id": offer["agent_id"], "executor_id": {"value": "e"},
                                                 "data": base64.b64encode(b"x").decode()}},
                 {"type": "REQUEST", "request": {"requests": []}}):
        r = requests.post(f"http://{m.master_address}/api/v1/scheduler",
                          json={**body, "framework_id": {"value": f.id}},
                          headers={"Mesos-Stream-Id": f.driver.stream_id}, timeout=10)
        assert r.status_code == 202, r.text
    # the subscription still works: a later call is served and the agent is offered again
    f.driver.declineOffer(offer["id"], filters={"refuse_seconds": 0})
    again = f.take_offer(lambda o: o["agent_id"] == offer["agent_id"])
    assert again["id"] != offer["id"]
    assert f.sched.errors == [] and f.sched.registrations == 1


def _free_the_agent(f: TestFramework, event: str) -> dict:
    """Bring about `event`, after which the framework's only agent has free resources to offer again.

    The agent starts fully offered (its one offer taken); what is returned is that offer.
    """
    offer = f.take_offer()
    if event == "decline-refuse-0":
        f.driver.declineOffer(offer["id"], filters={"refuse_seconds": 0})
    elif event == "revive":
        f.driver.declineOffer(offer["id"], filters={"refuse_seconds": 3600})
        f.driver.reviveOffers()
    else:  # a task takes every cpu and all memory; the rest of the offer is refused for an hour
        command = "sleep 0.3" if event == "task-finished" else "sleep 1000"
        task = task_info(offer["agent_id"], cpus=4, mem=8192, command=command)
        f.launch(offer, [task], refuse_seconds=3600)
        tid = task["task_id"]["value"]
        f.wait_state(tid, "TASK_RUNNING")
        if event == "task-killed":
            f.driver.killTask(task["task_id"])
        f.wait_state(tid, "TASK_FINISHED" if event == "task-finished" else "TASK_KILLED")
    return offer


@pytest.mark.parametrize("event", ["task-finished", "task-killed", "decline-refuse-0", "revive"])
def test_freed_resources_are_offered_at_once_not_at_the_next_allocation_interval(cluster, framework,
                                                                                 event) -> None:
    m = cluster(1, allocation_interval=60)  # the timer's first round is a minute away
    master = m.server.master
    timer = master._periodic["_allocate"]  # the pending round of the periodic timer; replaced when it runs
    f = framework(m.master_address)  # its first offer comes from SUBSCRIBE (an event) as well
    offer = _free_the_agent(f, event)
    again = f.take_offer(lambda o: o["agent_id"] == offer["agent_id"], timeout=10)
    assert {r["name"]: r.get("scalar", {}).get("value") for r in again["resources"]}["cpus"] == 4
    assert master._periodic["_allocate"] is timer, "the periodic allocation ran: the offer may be the timer's"


def test_calls_with_nothing_to_do_here_are_answered_as_mesos_answers_them(cluster, raw) -> None:
    """An implicit RECONCILE_OPERATIONS of a framework without operations is accepted (its answers come as
    events: none here), and answers to unknown inverse offers are accepted and ignored (as Mesos does); an
    UPDATE_FRAMEWORK for another framework id is refused as Mesos refuses it (what it changes:
    test_update_framework.py; inverse offers: test_maintenance.py; operation feedback:
    tests/apache_mesos/test_operation_feedback_as_real_mesos.py)."""
    m = cluster(1)
    sub = raw(m.master_address)
    fw = {"value": sub.framework_id}
    reconciled = sub.call({"type": "RECONCILE_OPERATIONS", "framework_id": fw, "reconcile_operations": {}})
    assert (reconciled.status_code, reconciled.text) == (202, "")
    for body in ({"type": "ACCEPT_INVERSE_OFFERS", "accept_inverse_offers": {"inverse_offer_ids": []}},
                 {"type": "DECLINE_INVERSE_OFFERS", "decline_inverse_offers": {"inverse_offer_ids": []}}):
        answer = sub.call({**body, "framework_id": fw})
        assert answer.status_code == 202, (body["type"], answer.text)
    other = sub.call({"type": "UPDATE_FRAMEWORK", "framework_id": fw, "update_framework": {
        "framework_info": {"user": "u", "name": "raw", "id": {"value": "another"}}}})
    assert other.status_code == 400 and "differs" in other.text
