"""The master's side of faults, without HTTP: unreachable agents, a new leader's recovery, agent health.

The Master runs on an event loop that is never started: timers are only
scheduled, and the tests call what they would call (`ping_agents`,
`_end_recovery`), so time is under the test's control.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from scylla_singa.mesos.master.master_core import Master
from scylla_singa.mesos.master.master_records import MasterConfig
from scylla_singa.mesos.master.registration_lifecycles import AgentLinkLifecycle, AgentUnreachable, RemoveAgent

CPUS = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 4}, "role": "*"},
        {"name": "mem", "type": "SCALAR", "scalar": {"value": 4096}, "role": "*"}]
TASK_RES = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}, "role": "*"}]


class Box:
    """An Outbox that records what is sent (a framework's stream or an agent's link)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self.last_seen = 0.0

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def close(self) -> None:
        self.closed = True

    def updates(self) -> list[tuple[str, str, str]]:
        return [(e["update"]["status"]["task_id"]["value"], e["update"]["status"]["state"],
                 e["update"]["status"].get("reason", "")) for e in self.sent if e.get("type") == "UPDATE"]


@pytest.fixture
def master() -> Iterator[Master]:
    loop = asyncio.new_event_loop()
    m = Master(MasterConfig(work_dir=None, agent_ping_interval=2.0, agent_ping_misses=5,
                            agent_reregister_timeout=30.0))
    m.start(loop)
    try:
        yield m
    finally:
        m.stop()
        loop.close()


def _subscribe(m: Master, fw_id: str = "fw1") -> tuple[Any, Box]:
    info = {"name": "f", "user": "u", "id": {"value": fw_id}, "failover_timeout": 600}
    stream = Box()
    m.subscribe({"type": "SUBSCRIBE", "subscribe": {"framework_info": info}, "framework_id": {"value": fw_id}},
                info, stream, None, "stream-1")
    return m.frameworks[fw_id], stream


def _register(m: Master, agent_id: str | None = None, tasks: list[dict] = (), **agent: Any) -> Box:
    link = Box()
    m.agent_registry.link_opened(link)
    info = {"hostname": "h1", "port": 5051, "ip": "10.0.0.1", "resources": CPUS, **agent}
    if agent_id:
        info.update(agent_id=agent_id, tasks=list(tasks))
    m.agent_registry.agent_message(link, {"type": "REGISTER", "ref": "r1", "agent": info})
    return link


def _running_task(fw_id: str, task_id: str) -> dict:
    return {"framework_id": fw_id, "framework": {"name": "f", "user": "u"},
            "task": {"task_id": {"value": task_id}, "name": task_id, "resources": TASK_RES},
            "state": "TASK_RUNNING", "status": {"task_id": {"value": task_id}, "state": "TASK_RUNNING"}}


def _reconcile(m: Master, fw: Any, *pairs: tuple[str, str | None]) -> None:
    tasks = [{"task_id": {"value": t}, **({"agent_id": {"value": a}} if a else {})} for t, a in pairs]
    m.handle_call(fw, {"type": "RECONCILE", "reconcile": {"tasks": tasks}})


def test_registered_tells_the_agent_the_masters_ping_timeout(master: Master) -> None:
    link = _register(master)
    (reply,) = [m for m in link.sent if m["type"] == "REGISTERED"]
    assert reply["ping_timeout_s"] == 10.0


def test_an_agent_silent_past_the_ping_timeout_is_unreachable_and_its_tasks_lost(master: Master) -> None:
    fw, stream = _subscribe(master)
    link = _register(master, "S1", [_running_task("fw1", "t1")])
    master.agent_registry.ping_agents()
    assert link.sent[-1] == {"type": "PING"} and "S1" in master.agent_registry.agents
    link.last_seen = master.now() - 10.5
    master.agent_registry.ping_agents()
    assert "S1" not in master.agent_registry.agents and "S1" in master.agent_registry.removed_agents and link.closed
    (lost,) = [e["update"]["status"] for e in stream.sent if e.get("type") == "UPDATE"]
    assert lost["state"] == "TASK_LOST" and lost["reason"] == "REASON_AGENT_REMOVED"
    assert "unreachable" in lost["message"]
    assert {"type": "FAILURE", "failure": {"agent_id": {"value": "S1"}}} in stream.sent
    # When its link returns, the agent is refused (and kills its tasks), then registers anew.
    again = _register(master, "S1", [_running_task("fw1", "t1")])
    assert again.sent[-1]["type"] == "REREGISTER_REFUSED"


def test_a_new_leader_answers_reconciliation_of_tasks_on_agents_not_back_yet_once_they_are(
        master: Master) -> None:
    master.became_leader()
    fw, stream = _subscribe(master)
    _reconcile(master, fw, ("t1", "S1"), ("t2", "S2"), ("t3", None))
    assert stream.updates() == [("t3", "TASK_LOST", "REASON_RECONCILIATION")]  # no agent named: at once
    _register(master, "S1", [_running_task("fw1", "t1")])
    assert stream.updates()[1:] == [("t1", "TASK_RUNNING", "REASON_RECONCILIATION")]
    master._end_recovery()  # S2 never came back
    assert stream.updates()[2:] == [("t2", "TASK_LOST", "REASON_RECONCILIATION")]
    _reconcile(master, fw, ("t4", "S4"))  # after recovery: at once
    assert stream.updates()[3:] == [("t4", "TASK_LOST", "REASON_RECONCILIATION")]


def test_an_agent_that_reports_itself_unhealthy_offers_nothing_until_healthy(master: Master) -> None:
    fw, stream = _subscribe(master)
    link = _register(master)
    agent_id = link.sent[-1]["agent_id"]
    master._allocate()
    (offers,) = [e for e in stream.sent if e["type"] == "OFFERS"]
    offer_id = offers["offers"]["offers"][0]["id"]["value"]
    master.agent_registry.agent_message(link, {"type": "AGENT_HEALTH", "agent_id": agent_id, "healthy": False,
                                "message": "The Docker engine does not answer"})
    assert {"type": "RESCIND", "rescind": {"offer_id": {"value": offer_id}}} in stream.sent
    assert not master.agent_registry.agents[agent_id].healthy
    n = len(stream.sent)
    master._allocate()
    assert not [e for e in stream.sent[n:] if e["type"] == "OFFERS"]
    master.agent_registry.agent_message(link, {"type": "AGENT_HEALTH", "agent_id": agent_id, "healthy": True})
    master._allocate()
    assert [e for e in stream.sent[n:] if e["type"] == "OFFERS"]


def test_an_agent_registering_unhealthy_offers_nothing(master: Master) -> None:
    fw, stream = _subscribe(master)
    _register(master, healthy=False, health="no engine")
    master._allocate()
    assert not [e for e in stream.sent if e["type"] == "OFFERS"]


def test_agent_link_lifecycle_unreachable_removes_a_connected_agent() -> None:
    lc = AgentLinkLifecycle("CONNECTED")
    assert lc.handle(AgentUnreachable("no pongs")) == [RemoveAgent("no pongs")] and lc.state == "REMOVED"
    assert lc.handle(AgentUnreachable()) == []


def test_repeating_timers_keep_one_pending_handle_each() -> None:
    """A master runs for months: its allocation, heartbeat, ping and operation-status timers must not pile up
    handles."""
    loop = asyncio.new_event_loop()
    m = Master(MasterConfig(work_dir=None, allocation_interval=0.001, heartbeat_interval=0.001,
                            agent_ping_interval=0.001))
    m.start(loop)
    try:
        loop.run_until_complete(asyncio.sleep(0.2))
        assert sorted(m._periodic) == ["_allocate", "_heartbeat", "ping_agents", "resend_unacknowledged"]
    finally:
        m.stop()
        loop.run_until_complete(asyncio.sleep(0.01))
        assert not m._periodic
        loop.close()
