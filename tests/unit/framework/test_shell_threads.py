"""The framework shell's threads: slow Docker, delivery (HDFS), master state and master calls never hold up
the event thread, and the pymesos callbacks only queue.

The shell runs for real (its event thread, its I/O pool, its master-calls
thread); the driver, the swarm manager, delivery and the master's HTTP API
are stand-ins that block until a test releases them.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.delivery.job_files import Artifacts
from scylla_singa.framework import shell as shell_module
from scylla_singa.framework.core import CoreConfig, FrameworkCore
from scylla_singa.framework.model import JobState
from scylla_singa.framework.progress_book import ProgressBook
from scylla_singa.framework.shell import FrameworkShell
from scylla_singa.framework.store import JobStore
from .builders import offer, spec

PROMPT_S = 0.2  # a callback that only queues returns well within this


class Gate:
    """A blocking dependency: every call waits until the test opens the gate (or 20 s pass)."""

    def __init__(self, is_open: bool = False) -> None:
        self.opened = threading.Event()
        if is_open:
            self.opened.set()
        self.entered = threading.Event()

    def pass_through(self) -> None:
        self.entered.set()
        assert self.opened.wait(20), "the test never opened the gate"


class StandInDriver:
    """pymesos's driver as the shell uses it; each call is an HTTP POST to a master that answers when
    `gate` opens. Calls are recorded in the order they reach the master."""

    gate = Gate(is_open=True)

    def __init__(self, scheduler: Any, info: dict, master: str, **_: Any) -> None:
        self.master, self.framework_id, self.calls = master, None, []

    def start(self) -> None:
        pass

    def stop(self, failover: bool = False) -> None:
        pass

    def join(self) -> None:
        pass

    def _post(self, what: str) -> None:
        self.gate.pass_through()
        self.calls.append(what)

    def acceptOffers(self, offer_ids, operations, filters=None) -> None:
        self._post("ACCEPT")

    def declineOffer(self, offer_ids, filters=None) -> None:
        self._post("DECLINE")

    def reviveOffers(self) -> None:
        self._post("REVIVE")

    def suppressOffers(self) -> None:
        self._post("SUPPRESS")

    def killTask(self, task_id) -> None:
        self._post("KILL")

    def reconcileTasks(self, tasks) -> None:
        self._post("RECONCILE")


class StandInDelivery:
    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def prepare(self, job_id: str, files: dict[str, bytes], network: str) -> Artifacts:
        self.gate.pass_through()
        return Artifacts(network)

    def cleanup(self, job_id: str, keep_workspace: bool) -> None:
        pass


@pytest.fixture
def gates(monkeypatch):
    """One gate per slow dependency, all open; a test closes the one it makes slow."""
    g = SimpleNamespace(overlay=Gate(True), delivery=Gate(True), master_state=Gate(True), master_calls=Gate(True))

    def create_job_network(client, job_id: str):
        g.overlay.pass_through()
        return SimpleNamespace(name=f"scylla-{job_id}")

    class StandInMesosHttp:
        def __init__(self, master: str, credential: object = None) -> None:
            pass

        def cluster_agents(self) -> tuple:
            g.master_state.pass_through()
            return ()

    monkeypatch.setattr(shell_module, "create_job_network", create_job_network)
    monkeypatch.setattr(shell_module, "MesosHttp", StandInMesosHttp)
    monkeypatch.setattr(StandInDriver, "gate", g.master_calls)
    yield g
    for gate in vars(g).values():
        gate.opened.set()


@pytest.fixture
def shell(tmp_path: Path, gates):
    s = FrameworkShell(FrameworkCore(CoreConfig()), JobStore(tmp_path / "f.sqlite"), StandInDelivery(gates.delivery),
                       SimpleNamespace(), ProgressBook(), tick_s=0.05)
    s.start("127.0.0.1:5050", driver_class=StandInDriver)
    yield s
    s.stop(teardown=False)


def timed(fn, *args) -> float:
    started = time.monotonic()
    fn(*args)
    return time.monotonic() - started


def state_of(shell: FrameworkShell, job_id: str) -> JobState | None:
    job = shell.job(job_id)
    return job.state if job else None


@pytest.mark.parametrize("slow", ["overlay", "delivery", "master_state"],
                         ids=["overlay-creation", "delivery-hdfs-upload", "master-state-http"])
def test_a_slow_preparation_does_not_hold_up_the_event_thread_and_its_result_arrives(shell, gates, slow) -> None:
    gate = getattr(gates, slow)
    gate.opened.clear()
    driver = shell.driver
    assert timed(shell.registered, driver, {"value": "fw"}, {}) < PROMPT_S
    shell.submit(spec(job_id="j1"))
    assert gate.entered.wait(5), f"the {slow} step was never reached"
    # While job j1's preparation is blocked, callbacks return at once and the core goes on with other events:
    # offers nobody needs yet are declined, and the core suppresses offers.
    assert timed(shell.resourceOffers, driver, [offer("a1")]) < PROMPT_S
    assert timed(shell.statusUpdate, driver, {"task_id": {"value": "x.proc-0.a1"}, "state": "TASK_RUNNING",
                                              "agent_id": {"value": "a1"}}) < PROMPT_S
    wait_until(lambda: "DECLINE" in driver.calls and "KILL" in driver.calls, 5,
               "the offers declined and the stray task killed while j1 prepares")
    assert state_of(shell, "j1") is JobState.PREPARING
    gate.opened.set()
    wait_until(lambda: state_of(shell, "j1") is JobState.WAITING, 5, "j1 prepared (JobPrepared arrived)")
    wait_until(lambda: "REVIVE" in driver.calls, 5, "offers revived for the waiting job")


def test_a_failed_preparation_arrives_as_an_event(shell, gates, monkeypatch) -> None:
    def refuse(job_id: str, files: dict[str, bytes], network: str) -> Artifacts:
        raise shell_module.DeliveryError("no HDFS at hdfs://nowhere:9870")

    monkeypatch.setattr(shell.delivery, "prepare", refuse)
    shell.registered(shell.driver, {"value": "fw"}, {})
    shell.submit(spec(job_id="j1"))
    assert shell.ended["j1"].wait(5)
    job = shell.job("j1")
    assert job.state is JobState.FAILED and job.failure == "cannot prepare the job: no HDFS at hdfs://nowhere:9870"


def test_slow_master_calls_keep_their_order_and_do_not_hold_up_the_event_thread(shell, gates) -> None:
    gates.master_calls.opened.clear()
    driver = shell.driver
    shell.registered(driver, {"value": "fw"}, {})
    assert gates.master_calls.entered.wait(5)  # RECONCILE is on its way to a master that does not answer
    shell.resourceOffers(driver, [offer("a1")])
    shell.submit(spec(job_id="j1"))
    wait_until(lambda: state_of(shell, "j1") is JobState.WAITING, 5, "j1 prepared while the master is slow")
    assert driver.calls == []
    gates.master_calls.opened.set()
    wait_until(lambda: driver.calls[-1:] == ["REVIVE"], 5, "every queued call reached the master")
    assert driver.calls == ["RECONCILE", "SUPPRESS", "DECLINE", "REVIVE"]  # the order the core gave them


def test_the_framework_id_is_recorded_by_the_event_thread(shell) -> None:
    shell.registered(shell.driver, {"value": "fw-7"}, {})
    assert shell.subscribed.is_set()
    wait_until(lambda: shell.store.get_meta("framework_id") == "fw-7", 5, "the framework id in the store")
