"""Operation feedback in the master, without HTTP: what a framework hears about an operation with an id, what
RECONCILE_OPERATIONS answers in each case Mesos distinguishes, and the `master/operations/*` metrics.

The everyday conversation is compared with a live Apache Mesos 1.12 in
tests/apache_mesos/test_operation_feedback_as_real_mesos.py; here are the
cases that need an agent to go away or a master to fail over.
"""

from __future__ import annotations

from typing import Any

import pytest

from scylla_singa.mesos.api.resources import Resources
from scylla_singa.mesos.master.acls import parse_acls
from scylla_singa.mesos.master.master_core import Master
from scylla_singa.mesos.master.master_metrics import metrics_json

from .test_master_failover import Box, _register, master  # noqa: F401 - the fixture

ROLE = "ml"


def _subscribe(m: Master) -> tuple[Any, Box]:
    """A framework of role ROLE (not MULTI_ROLE: its offers carry no allocation_info)."""
    info = {"name": "f", "user": "u", "id": {"value": "fw1"}, "role": ROLE}
    stream = Box()
    m.subscribe({"type": "SUBSCRIBE", "subscribe": {"framework_info": info}, "framework_id": {"value": "fw1"}},
                info, stream, None, "stream-1")
    return m.frameworks["fw1"], stream


def _offer(m: Master, stream: Box) -> dict[str, Any]:
    m._allocate()
    return next(e for e in reversed(stream.sent) if e["type"] == "OFFERS")["offers"]["offers"][0]


def _reserve(op_id: str | None, cpus: float = 1.0, role: str = ROLE, allocated: str | None = None) -> dict[str, Any]:
    """A RESERVE; without `allocated`, as a framework that is not MULTI_ROLE writes it (no allocation_info)."""
    resource: dict[str, Any] = {"name": "cpus", "type": "SCALAR", "scalar": {"value": cpus},
                                "reservations": [{"type": "DYNAMIC", "role": role}]}
    if allocated is not None:
        resource["allocation_info"] = {"role": allocated}
    op: dict[str, Any] = {"type": "RESERVE", "reserve": {"resources": [resource]}}
    if op_id is not None:
        op["id"] = {"value": op_id}
    return op


def _accept(m: Master, fw: Any, offer: dict[str, Any], *ops: dict[str, Any]) -> None:
    m.handle_call(fw, {"type": "ACCEPT", "accept": {"offer_ids": [offer["id"]], "operations": list(ops)}})


def _statuses(stream: Box) -> list[dict[str, Any]]:
    return [e["update_operation_status"]["status"] for e in stream.sent if e["type"] == "UPDATE_OPERATION_STATUS"]


def _reconcile(m: Master, fw: Any, stream: Box, *items: tuple[str, str | None]) -> list[tuple[str, str]]:
    before = len(_statuses(stream))
    ops = [{"operation_id": {"value": o}, **({"agent_id": {"value": a}} if a else {})} for o, a in items]
    m.handle_call(fw, {"type": "RECONCILE_OPERATIONS", "reconcile_operations": {"operations": ops}})
    return [(s["state"], s.get("message", "")) for s in _statuses(stream)[before:]]


def _operations_metrics(m: Master) -> dict[str, float]:
    return {k: v for k, v in metrics_json(m).items() if k.startswith("master/operations/") and v}


@pytest.fixture
def reserved(master: Master) -> tuple[Master, Any, Box, str]:
    """A framework whose RESERVE with id "op-1" finished on agent S (not acknowledged yet)."""
    _register(master)
    fw, stream = _subscribe(master)
    offer = _offer(master, stream)
    _accept(master, fw, offer, _reserve("op-1"))
    return master, fw, stream, offer["agent_id"]["value"]


def test_a_finished_operation_is_kept_until_its_status_is_acknowledged(reserved) -> None:
    m, fw, stream, agent = reserved
    [finished] = _statuses(stream)
    assert finished["state"] == "OPERATION_FINISHED" and finished["agent_id"] == {"value": agent}
    ack = {"agent_id": {"value": agent}, "operation_id": {"value": "op-1"}}
    m.handle_call(fw, {"type": "ACKNOWLEDGE_OPERATION_STATUS",   # another status's uuid: ignored
                       "acknowledge_operation_status": {**ack, "uuid": "AAAAAAAAAAAAAAAAAAAAAA=="}})
    assert _reconcile(m, fw, stream, ("op-1", agent)) == [("OPERATION_FINISHED", "")]
    assert len(m.operation_feedback.operations()) == 1
    m.handle_call(fw, {"type": "ACKNOWLEDGE_OPERATION_STATUS",
                       "acknowledge_operation_status": {**ack, "uuid": finished["uuid"]["value"]}})
    assert _reconcile(m, fw, stream, ("op-1", agent)) == [("OPERATION_UNKNOWN", "Reconciliation: Operation is unknown")]
    assert m.operation_feedback.operations() == []
    assert m.counters["master/invalid_operation_status_update_acknowledgements"] == 1
    assert m.counters["master/valid_operation_status_update_acknowledgements"] == 1
    assert _operations_metrics(m) == {"master/operations/finished": 1, "master/operations/total": 1,
                                      "master/operations/reserve/finished": 1, "master/operations/reserve/total": 1}


def _silence(m: Master, agent: str) -> None:
    """The agent's link stops answering pings past the timeout: the agent is unreachable and removed."""
    m.agent_registry.agents[agent].link.last_seen = m.now() - 10.5
    m.agent_registry.ping_agents()
    assert agent not in m.agent_registry.agents


@pytest.mark.parametrize("remove, state, message", [
    (lambda m, agent: m.agent_registry.mark_gone(m.agent_registry.agents[agent]),
     "OPERATION_GONE_BY_OPERATOR", "Reconciliation: Agent marked gone by operator"),
    (_silence, "OPERATION_UNREACHABLE", "Reconciliation: Agent is unreachable"),
], ids=["gone", "unreachable"])
def test_an_operation_ends_with_its_agent(reserved, remove, state, message) -> None:
    m, fw, stream, agent = reserved
    remove(m, agent)
    assert _reconcile(m, fw, stream, ("op-1", agent), ("op-2", agent)) == [(state, message)] * 2
    assert m.operation_feedback.operations() == []
    short = state.removeprefix("OPERATION_").lower()
    assert _operations_metrics(m) == {"master/operations/finished": 1, f"master/operations/{short}": 1,
                                      "master/operations/total": 2, "master/operations/reserve/finished": 1,
                                      f"master/operations/reserve/{short}": 1, "master/operations/reserve/total": 2}


def test_unknown_operations_are_answered_by_what_the_master_knows_of_their_agent(master: Master) -> None:
    master.became_leader()   # a new leader: agents of the old one may still come back
    fw, stream = _subscribe(master)
    assert _reconcile(master, fw, stream, ("a", "S-old"), ("b", None)) == [
        ("OPERATION_RECOVERING", "Reconciliation: Agent is recovered but has not re-registered"),
        ("OPERATION_UNKNOWN", "Reconciliation: Operation is unknown and no 'agent_id' was provided")]
    master._end_recovery()
    assert _reconcile(master, fw, stream, ("a", "S-old")) == [
        ("OPERATION_UNKNOWN", "Reconciliation: Both operation and agent are unknown")]


def test_an_invalid_operation_is_an_error_without_uuid_and_a_launch_cannot_have_an_id(master: Master) -> None:
    _register(master)
    fw, stream = _subscribe(master)
    offer = _offer(master, stream)
    task = {"name": "t", "task_id": {"value": "t1"}, "agent_id": offer["agent_id"],
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}}], "command": {"value": "true"}}
    _accept(master, fw, offer, _reserve("bad", role="other"), _reserve(None, cpus=0.5),
            {"type": "LAUNCH", "id": {"value": "launch"}, "launch": {"task_infos": [task]}})
    [error] = _statuses(stream)
    assert error["state"] == "OPERATION_ERROR" and "uuid" not in error and "agent_id" not in error
    assert error["message"].startswith("A reserve operation was attempted for a resource with role 'other', but "
                                       "the resource was allocated to role 'ml'")
    assert error["message"].endswith(f"; on agent {offer['agent_id']['value']} at slave(1)@10.0.0.1:5051 (h1)")
    assert stream.updates() == [("t1", "TASK_ERROR", "REASON_TASK_INVALID")]
    assert not master.agent_registry.agents[offer["agent_id"]["value"]].tasks   # the launch did not happen
    assert _operations_metrics(master) == {   # the RESERVE without an id counts as finished, as in Mesos
        "master/operations/error": 1, "master/operations/finished": 1, "master/operations/total": 2,
        "master/operations/reserve/error": 1, "master/operations/reserve/finished": 1,
        "master/operations/reserve/total": 2}


def test_a_removed_framework_takes_its_operations_along(reserved) -> None:
    m, fw, stream, _ = reserved
    m.handle_call(fw, {"type": "TEARDOWN"})
    assert m.operation_feedback.operations() == []


def test_implicit_reconciliation_sends_every_followed_operation_without_uuid(reserved) -> None:
    m, fw, stream, agent = reserved
    m.handle_call(fw, {"type": "RECONCILE_OPERATIONS", "reconcile_operations": {}})
    latest = _statuses(stream)[-1]
    assert latest == {"state": "OPERATION_FINISHED", "operation_id": {"value": "op-1"}, "agent_id": {"value": agent}}


def test_an_unacknowledged_status_is_sent_again_later_and_later_until_acknowledged(reserved, monkeypatch) -> None:
    m, fw, stream, agent = reserved
    clock = [m.now()]
    monkeypatch.setattr(m, "now", lambda: clock[0])
    [finished] = _statuses(stream)

    def sent_after(seconds: float) -> int:
        clock[0] += seconds
        before = len(_statuses(stream))
        m.operation_feedback.resend_unacknowledged()
        return len(_statuses(stream)) - before
    assert sent_after(9) == 0 and sent_after(1.5) == 1   # 10 s after it was sent
    assert sent_after(19) == 0 and sent_after(1.5) == 1   # then 20 s
    assert _statuses(stream)[-1] == finished            # the same status, the same uuid to acknowledge
    m.handle_call(fw, {"type": "ACKNOWLEDGE_OPERATION_STATUS", "acknowledge_operation_status": {
        "agent_id": {"value": agent}, "operation_id": {"value": "op-1"}, "uuid": finished["uuid"]["value"]}})
    assert sent_after(3600) == 0


def _kept(link: Box) -> list[dict[str, Any]]:
    """What the master last told the agent to keep (CHECKPOINT_OPERATIONS)."""
    return [m for m in link.sent if m["type"] == "CHECKPOINT_OPERATIONS"][-1]["operations"]


def test_the_agent_keeps_each_followed_operation_and_a_new_master_follows_it_again(master: Master) -> None:
    link = _register(master)
    fw, stream = _subscribe(master)
    offer = _offer(master, stream)
    agent = offer["agent_id"]["value"]
    _accept(master, fw, offer, _reserve("op-1"))
    [finished] = _statuses(stream)
    [kept] = _kept(link)
    assert kept["info"]["id"] == {"value": "op-1"} and kept["latest_status"] == finished
    assert kept == master.operation_feedback.operations()[0]

    # a new master (this one, having forgotten) hears of it from the re-registering agent
    master.operation_feedback.by_framework.clear()
    master.operation_feedback.recovered(agent, [kept, {"not": "an operation"}])
    assert master.operation_feedback.operations() == [kept]
    assert _reconcile(master, fw, stream, ("op-1", agent)) == [("OPERATION_FINISHED", "")]
    master.operation_feedback.recovered(agent, [kept])   # reported again: still one
    assert len(master.operation_feedback.operations()) == 1

    # acknowledged: the master forgets it and so does the agent
    master.handle_call(fw, {"type": "ACKNOWLEDGE_OPERATION_STATUS", "acknowledge_operation_status": {
        "agent_id": {"value": agent}, "operation_id": {"value": "op-1"}, "uuid": finished["uuid"]["value"]}})
    assert master.operation_feedback.operations() == [] and _kept(link) == []


def test_a_recovered_unacknowledged_status_is_sent_again_once_due(master: Master, monkeypatch) -> None:
    _register(master)
    fw, stream = _subscribe(master)
    offer = _offer(master, stream)
    _accept(master, fw, offer, _reserve("op-1"))
    [kept] = master.operation_feedback.operations()
    master.operation_feedback.by_framework.clear()
    now = master.now()
    master.operation_feedback.recovered(offer["agent_id"]["value"], [kept])
    master.operation_feedback.resend_unacknowledged()
    assert len(_statuses(stream)) == 1   # not yet due
    monkeypatch.setattr(master, "now", lambda: now + 10.5)
    master.operation_feedback.resend_unacknowledged()
    assert _statuses(stream)[1:] == [kept["latest_status"]]


def test_a_removed_framework_leaves_nothing_for_its_agents_to_keep(reserved) -> None:
    m, fw, _, agent = reserved
    link = m.agent_registry.agents[agent].link
    assert len(_kept(link)) == 1
    m.operation_feedback.framework_removed(fw.id)
    assert _kept(link) == []


def test_an_operation_the_acls_refuse_is_an_error_and_changes_nothing(master: Master) -> None:
    _register(master)
    fw, stream = _subscribe(master)
    fw.principal = "mallory"
    master.cfg.acls = parse_acls({"reserve_resources": [{"principals": ["ops"], "roles": [ROLE]}],
                                  "permissive": False}, "acls.yaml")
    offer = _offer(master, stream)
    _accept(master, fw, offer, _reserve("op-1"))
    [error] = _statuses(stream)
    assert error == {"state": "OPERATION_ERROR", "operation_id": {"value": "op-1"}, "message":
                     f"Not authorized: principal 'mallory' may not reserve resources for role '{ROLE}' "
                     "(ACL reserve_resources)"}
    assert master.agent_registry.agents[offer["agent_id"]["value"]].total.made_by_operations().is_empty()


def test_a_shared_volume_needs_a_framework_that_takes_shared_resources(master: Master) -> None:
    _register(master, resources=Resources.parse("cpus:4;mem:1024;disk:100").to_json())
    fw, stream = _subscribe(master)
    offer = _offer(master, stream)
    disk = {"name": "disk", "type": "SCALAR", "scalar": {"value": 50},
            "reservations": [{"type": "DYNAMIC", "role": ROLE}]}
    volume = {**disk, "disk": {"persistence": {"id": "v1"}, "volume": {"mode": "RW", "container_path": "v"}},
              "shared": {}}
    _accept(master, fw, offer, {"type": "RESERVE", "reserve": {"resources": [disk]}},
            {"type": "CREATE", "id": {"value": "op-c"}, "create": {"volumes": [volume]}})
    [error] = _statuses(stream)
    assert error["state"] == "OPERATION_ERROR" and error["message"] == (
        f"Create volume operation for 'disk(reservations: [(DYNAMIC,{ROLE})])[v1:v]<SHARED>:50' has been "
        "attempted by framework 'fw1' with no SHARED_RESOURCES capability")
