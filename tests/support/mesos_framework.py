"""A pymesos framework that records everything, and TaskInfo builders, for tests against a master.

For the tests that need a real framework against `EmbeddedMesos` (or any
Mesos master). Waiting is always on a condition with a deadline (`wait`),
never a bare sleep.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import requests
from pymesos import MesosSchedulerDriver, Scheduler

from scylla_singa.common.waiting import Deadline

_ids = itertools.count(1)


def scalar(name: str, value: float) -> dict[str, Any]:
    return {"name": name, "type": "SCALAR", "scalar": {"value": value}}


def task_info(agent_id: dict | str, *, task_id: str | None = None, cpus: float = 0.1, mem: float = 32,
              command: str = "sleep 1000", image: str | None = None, network: str = "BRIDGE",
              shell: bool = True, grace_s: float | None = None, extra: dict[str, Any] | None = None,
              uris: list[dict[str, Any]] | None = None, env: dict[str, str] | None = None,
              resources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A TaskInfo for a command (or a Docker image) with the given resources."""
    tid = task_id or f"task-{next(_ids)}"
    agent = agent_id if isinstance(agent_id, dict) else {"value": agent_id}
    cmd: dict[str, Any] = {"value": command, "shell": shell}
    if uris:
        cmd["uris"] = uris
    if env:
        cmd["environment"] = {"variables": [{"name": k, "value": v} for k, v in env.items()]}
    task: dict[str, Any] = {"task_id": {"value": tid}, "name": tid, "agent_id": agent, "command": cmd,
                            "resources": resources or [scalar("cpus", cpus), scalar("mem", mem)]}
    if image:
        task["container"] = {"type": "DOCKER", "docker": {"image": image, "network": network}}
    if grace_s is not None:
        task["kill_policy"] = {"grace_period": {"nanoseconds": int(grace_s * 1e9)}}
    if extra:
        task.update(extra)
    return task


def task_container_id(agent_address: str, task_id: str, auth: tuple[str, str] | None = None) -> dict[str, Any]:
    """The ContainerID a running task's agent gave it (its RUNNING status's container_status), from /state."""
    state = requests.get(f"http://{agent_address}/state", auth=auth, timeout=10).json()
    task = next(t for f in state["frameworks"] for e in f["executors"] for t in e["tasks"] if t["id"] == task_id)
    return next(s["container_status"]["container_id"] for s in task["statuses"] if "container_status" in s)


def offer_fits(offer: dict[str, Any], cpus: float, mem: float) -> bool:
    """True when the offer has at least `cpus` and `mem` (MB)."""
    got = {r["name"]: r.get("scalar", {}).get("value", 0.0) for r in offer.get("resources", [])}
    return got.get("cpus", 0.0) >= cpus and got.get("mem", 0.0) >= mem


class RecordingScheduler(Scheduler):
    """Records every callback; offers go to a pool unless `on_offers` handles them. Never raises."""

    def __init__(self, on_offers: Callable[[Any, list[dict]], None] | None = None) -> None:
        self.cond = threading.Condition()
        self.framework_id: str | None = None
        self.offers: list[dict] = []       # pool of offers not yet taken
        self.all_offers: list[dict] = []
        self.updates: list[dict] = []
        self.rescinded: list[str] = []
        self.errors: list[str] = []
        self.lost_agents: list[str] = []
        self.registrations = 0
        self.heartbeats = 0
        self.on_offers = on_offers

    def _note(self, fn: Callable[[], None]) -> None:
        with self.cond:
            fn()
            self.cond.notify_all()

    def registered(self, driver, framework_id, master_info) -> None:
        def f() -> None:
            self.framework_id = framework_id["value"]
            self.registrations += 1
        self._note(f)

    def reregistered(self, driver, master_info) -> None:
        def f() -> None:
            self.framework_id = driver.framework_id
            self.registrations += 1
        self._note(f)

    def resourceOffers(self, driver, offers) -> None:
        try:
            with self.cond:
                self.all_offers.extend(offers)
                self.cond.notify_all()
            if self.on_offers is not None:
                self.on_offers(driver, offers)
            else:
                self._note(lambda: self.offers.extend(offers))
        except Exception as exc:  # noqa: BLE001 - an exception here would abort the driver
            message = f"on_offers raised {exc!r}"
            self._note(lambda: self.errors.append(message))

    def offerRescinded(self, driver, offer_id) -> None:
        def f() -> None:
            self.rescinded.append(offer_id["value"])
            self.offers = [o for o in self.offers if o["id"]["value"] != offer_id["value"]]
        self._note(f)

    def statusUpdate(self, driver, status) -> None:
        self._note(lambda: self.updates.append(status))

    def error(self, driver, message) -> None:
        self._note(lambda: self.errors.append(message))
        if message in ("Framework failed over", "Framework has been removed"):
            # Another scheduler took over this framework id (or it was torn down): stop without
            # TEARDOWN rather than reconnect (pymesos would otherwise ping-pong).
            driver.stop(failover=True)

    def slaveLost(self, driver, agent_id) -> None:
        self._note(lambda: self.lost_agents.append(agent_id["value"]))

    def processHeartBeat(self, driver) -> None:
        def f() -> None:
            self.heartbeats += 1
        self._note(f)

    def wait(self, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
        """The predicate's first truthy value (checked under the lock); TimeoutError naming `what`."""
        deadline = Deadline(timeout)
        with self.cond:
            while not (result := predicate()):
                if deadline.passed():
                    raise TimeoutError(f"timed out after {timeout}s waiting for {what}; "
                                       f"updates={[(u['task_id']['value'], u['state']) for u in self.updates][-10:]} "
                                       f"errors={self.errors}")
                self.cond.wait(deadline.nap(0.1))
            return result

    def states(self, task_id: str) -> list[str]:
        with self.cond:
            return [u["state"] for u in self.updates if u["task_id"]["value"] == task_id]


class TestFramework:
    """A pymesos driver (failover=True) with a RecordingScheduler; always `stop()` it."""

    __test__ = False  # not a pytest class

    def __init__(self, master: str, name: str = "test", *, framework_id: str | None = None,
                 role: str | None = None, capabilities: tuple[str, ...] = (), failover_timeout: float = 60.0,
                 principal: str | None = None, secret: str | None = None, credential: Any = None,
                 on_offers: Callable[[Any, list[dict]], None] | None = None, user: str = "nobody") -> None:
        if credential is not None:   # a mesos.api.credentials.Credential (e.g. EmbeddedMesos.framework_credential)
            principal, secret = credential.principal, credential.secret
        # "nobody": an agent runs process tasks as FrameworkInfo.user and refuses root unless allowed
        info: dict[str, Any] = {"user": user, "name": name, "failover_timeout": failover_timeout}
        if framework_id:
            info["id"] = {"value": framework_id}
        if role:
            info["role"] = role
        if capabilities:
            info["capabilities"] = [{"type": c} for c in capabilities]
        if principal:
            info["principal"] = principal
        self.sched = RecordingScheduler(on_offers)
        self.driver = MesosSchedulerDriver(self.sched, info, master, failover=True,
                                           principal=principal, secret=secret)
        self._stopped = False

    def start(self, timeout: float = 10.0) -> TestFramework:
        self.driver.start()
        self.sched.wait(lambda: self.sched.framework_id, timeout, "SUBSCRIBED")
        return self

    @property
    def id(self) -> str:
        return self.sched.framework_id

    def stop(self, teardown: bool = True) -> None:
        """Stop the driver; TEARDOWN unless `teardown` is False (a failover). Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        self.driver.stop(failover=not teardown)
        self.driver.join()

    def take_offer(self, predicate: Callable[[dict], bool] = lambda o: True, timeout: float = 10.0,
                   cpus: float = 0.0, mem: float = 0.0) -> dict:
        """Remove and return an offer from the pool that satisfies `predicate` and has `cpus` and `mem`."""
        def pick() -> dict | None:
            for o in self.sched.offers:
                if predicate(o) and offer_fits(o, cpus, mem):
                    self.sched.offers.remove(o)
                    return o
            return None
        return self.sched.wait(pick, timeout, "an offer")

    def launch(self, offer: dict, tasks: list[dict], refuse_seconds: float = 0.0) -> None:
        self.driver.launchTasks(offer["id"], tasks, filters={"refuse_seconds": refuse_seconds})

    def wait_state(self, task_id: str, states: str | tuple[str, ...], timeout: float = 15.0) -> dict:
        """The first update of `task_id` in one of `states`."""
        wanted = (states,) if isinstance(states, str) else states

        def find() -> dict | None:
            return next((u for u in self.sched.updates if u["task_id"]["value"] == task_id
                         and u["state"] in wanted), None)
        return self.sched.wait(find, timeout, f"{task_id} in {wanted}")

    def __enter__(self) -> TestFramework:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
