"""The agent's side of faults, with fakes: a dead Docker engine, health reports, a lost master link."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import docker.errors
import requests

from scylla_singa.common.waiting import wait_until_async
from scylla_singa.mesos.agent.agent_core import AgentCore, AgentInfo
from scylla_singa.mesos.agent.docker_runner import DockerRunner
from scylla_singa.mesos.agent.master_link import MasterLink
from scylla_singa.mesos.agent.simulated_runner import SimulatedRunner
from scylla_singa.mesos.agent.task_events import TaskContainerUp, TaskEvent, TaskLost
from scylla_singa.mesos.agent.task_lifecycle import TaskLifecycle
from scylla_singa.mesos.agent.task_runner import AgentTask
from scylla_singa.mesos.api.resources import Resources


def _core() -> tuple[AgentCore, list[dict]]:
    sent: list[dict] = []
    core = AgentCore(AgentInfo("h", Resources.parse("cpus:1;mem:64")), SimulatedRunner())
    core.send = sent.append
    return core, sent


def test_health_changes_go_to_the_master_once_registered_and_ride_on_registration() -> None:
    core, sent = _core()
    core.set_health(False, "The Docker engine does not answer")   # not registered: nothing sent
    assert sent == []
    core.agent_id = "a1"
    agent = core.registration()["agent"]
    assert agent["healthy"] is False and agent["health"] == "The Docker engine does not answer"
    core.on_registered("a1")
    core.set_health(False, "again")          # no change: nothing sent
    core.set_health(True)
    assert sent == [{"type": "AGENT_HEALTH", "agent_id": "a1", "healthy": True, "message": ""}]
    assert "healthy" not in core.registration()["agent"]


class DeadEngine:
    """A Docker client whose engine died after the container started: wait and ping fail."""

    def __init__(self) -> None:
        self.api = SimpleNamespace(inspect_container=self._inspect)
        self.inspected = 0

    def _inspect(self, container_id: str) -> dict:
        self.inspected += 1
        if self.inspected > 1:
            raise requests.exceptions.ConnectionError("engine socket closed")
        return {"State": {"Running": True}, "NetworkSettings": {"Networks": {}}}

    def ping(self) -> bool:
        raise requests.exceptions.ConnectionError("refused")


def test_a_container_whose_engine_dies_is_lost_and_the_agent_turns_unhealthy() -> None:
    async def go() -> list:
        runner = DockerRunner(DeadEngine(), [])  # type: ignore[arg-type]
        health: list = []
        runner.health_listener = lambda ok, why: health.append((ok, why))
        events: list[TaskEvent] = []
        container = SimpleNamespace(id="c0ffee0000", wait=lambda: (_ for _ in ()).throw(
            requests.exceptions.ConnectionError("engine socket closed")))
        task = AgentTask("f1", {}, {"task_id": {"value": "t1"}}, TaskLifecycle("t1"), "cid", Path("/tmp"))
        await runner._follow(task, container, "net", events.append, logs=False)
        runner.close()
        return [events, health]
    events, health = asyncio.run(go())
    assert [type(e) for e in events] == [TaskContainerUp, TaskLost]
    assert events[1].reason == "REASON_EXECUTOR_TERMINATED"
    assert "Docker engine stopped answering" in events[1].message
    assert health and health[0][0] is False


def test_a_swarm_worker_does_not_list_the_overlays_it_has_no_containers_on() -> None:
    def missing(name: str):
        raise docker.errors.NotFound("no such network")

    def client(role: dict) -> SimpleNamespace:
        image = SimpleNamespace(id="sha256:1", attrs={"Config": {"User": "1000"}})   # a non-root USER
        return SimpleNamespace(images=SimpleNamespace(get=lambda name: image),
                               networks=SimpleNamespace(get=missing), info=lambda: {"Swarm": role})
    spec = SimpleNamespace(force_pull=False, persistent=[], volumes={}, image="singa:latest", user_network=True,
                           network="scylla-job", user=None)
    worker = DockerRunner(client({"LocalNodeState": "active", "ControlAvailable": False}), [])  # type: ignore
    alone = DockerRunner(client({"LocalNodeState": "inactive"}), [])  # type: ignore[arg-type]
    try:
        assert worker._check_engine(spec) is None      # the engine fetches it when the container joins
        assert "does not exist" in alone._check_engine(spec)
    finally:
        worker.close()
        alone.close()


def test_the_master_link_adopts_the_masters_ping_timeout() -> None:
    link = MasterLink("127.0.0.1:1", [])
    link._dispatch({"type": "REGISTERED", "ref": "x", "agent_id": "a1", "ping_timeout_s": 10.0})
    assert link.ping_timeout == 10.0


def test_the_master_link_keeps_trying_whatever_finding_the_leader_raises() -> None:
    class Odd(Exception):
        """Not a network error (kazoo's KazooTimeoutError is a plain Exception too)."""

    async def go() -> int:
        link = MasterLink("zk://192.0.2.1:2181/mesos", [], backoff_max=0.01)
        calls = 0

        async def resolve() -> str:
            nonlocal calls
            calls += 1
            raise Odd("Connection time-out")
        link._resolve = resolve  # type: ignore[method-assign]
        link.start()
        await wait_until_async(lambda: calls >= 5 or link._task.done(), 10, "five attempts to reach the master",
                               interval_s=0.005)
        alive = not link._task.done()
        await link.stop()
        return calls if alive else -1
    assert asyncio.run(go()) >= 5  # it tried again after each failure and is still trying


def test_a_leader_named_by_not_leader_is_forgotten_when_it_cannot_be_reached() -> None:
    """A standby may name a leader that was just killed: the link must go back to ZooKeeper, not stick to it."""
    async def go() -> list[str]:
        link = MasterLink("zk://192.0.2.1:2181/mesos", [], backoff_max=0.01)
        assert link._dispatch({"type": "NOT_LEADER", "leader": "192.0.2.9:5050"}) == "reconnect"
        tried: list[str] = []

        async def resolve() -> str:
            tried.append(link.current)
            raise ConnectionRefusedError("nobody there")
        link._resolve = resolve  # type: ignore[method-assign]
        link.start()
        await wait_until_async(lambda: len(tried) >= 3, 10, "three attempts to reach the master", interval_s=0.005)
        await link.stop()
        return tried
    tried = asyncio.run(go())
    assert tried[0] == "192.0.2.9:5050" and tried[1:3] == ["zk://192.0.2.1:2181/mesos"] * 2, tried
