"""Dynamic reservations and persistent volumes on a running master: a framework's RESERVE/UNRESERVE/CREATE/
DESTROY in ACCEPT and the operator API's RESERVE/UNRESERVE_RESOURCES and CREATE/DESTROY_VOLUMES. Reserved
resources are offered to their role only, tasks launch on them, `/master/state`, `/roles` and GET_AGENTS show
them, bad calls get Mesos's status and text, a reservation outlives a master restart (the agent keeps it),
and what one task writes to a persistent volume the next task reads, until the volume is destroyed."""

from __future__ import annotations

from typing import Any

import requests

from scylla_singa.common.waiting import Deadline, wait_until
from tests.support.mesos_framework import task_info


def _reserved(name: str, amount: float, role: str, principal: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"type": "DYNAMIC", "role": role}
    if principal is not None:
        info["principal"] = principal
    return {"name": name, "type": "SCALAR", "scalar": {"value": amount}, "reservations": [info]}


def _operator(master: str, body: dict[str, Any], auth: Any = None) -> requests.Response:
    return requests.post(f"http://{master}/api/v1", json=body, timeout=10, auth=auth)


def _reserve(master: str, agent_id: str, resources: list[dict], kind: str = "RESERVE_RESOURCES",
             auth: Any = None) -> requests.Response:
    return _operator(master, {"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, "resources": resources}},
                     auth)


def _subscribe(raw: Any, master: str, role: str) -> Any:
    """A framework of `role` that reads reservations in their current form (RESERVATION_REFINEMENT: offers
    carry `reservations`; a framework without it gets the older `role` and `reservation`, as from Mesos)."""
    info = {"user": "nobody", "name": f"in-{role}", "role": role,
            "capabilities": [{"type": "RESERVATION_REFINEMENT"}]}
    return raw(master, {"type": "SUBSCRIBE", "subscribe": {"framework_info": info}})


def _agent(master: str, auth: Any = None) -> dict[str, Any]:
    (agent,) = requests.get(f"http://{master}/master/state", timeout=10, auth=auth).json()["slaves"]
    return agent


def _split(offer: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """An offer's scalars: (unreserved, reserved) by name."""
    plain: dict[str, float] = {}
    reserved: dict[str, float] = {}
    for r in offer["resources"]:
        if r["type"] == "SCALAR":
            into = reserved if r.get("reservations") else plain
            into[r["name"]] = into.get(r["name"], 0.0) + r["scalar"]["value"]
    return plain, reserved


def _accept(sub: Any, offer: dict[str, Any], *operations: dict[str, Any]) -> None:
    answer = sub.call({"type": "ACCEPT", "framework_id": {"value": sub.framework_id},
                       "accept": {"offer_ids": [offer["id"]], "operations": list(operations),
                                  "filters": {"refuse_seconds": 0}}})
    assert answer.status_code == 202, answer.text


def _acknowledge(sub: Any, status: dict[str, Any]) -> None:
    if "uuid" in status:
        sub.call({"type": "ACKNOWLEDGE", "framework_id": {"value": sub.framework_id},
                  "acknowledge": {"agent_id": status["agent_id"], "task_id": status["task_id"],
                                  "uuid": status["uuid"]}})


def _decline(sub: Any, offers: list[dict[str, Any]]) -> None:
    sub.call({"type": "DECLINE", "framework_id": {"value": sub.framework_id},
              "decline": {"offer_ids": [o["id"] for o in offers], "filters": {"refuse_seconds": 0}}})


def _offer(sub: Any, want: Any = lambda offer: True, timeout: float = 10.0) -> dict[str, Any]:
    """The first offer `want` takes; the others are declined at once (and status updates acknowledged)."""
    deadline = Deadline(timeout)
    while not deadline.passed():
        event = sub.next_of(("OFFERS", "UPDATE"), deadline.left())
        if event["type"] == "UPDATE":
            _acknowledge(sub, event["update"]["status"])
        for offer in (event.get("offers") or {}).get("offers") or ():
            if want(offer):
                return offer
            _decline(sub, [offer])
    raise TimeoutError("no such offer")


def test_a_framework_reserves_from_its_offer_launches_on_it_and_unreserves(cluster, raw) -> None:
    m = cluster([{"resources": "cpus:4;mem:1024;disk:100"}])
    ml = _subscribe(raw, m.master_address, "ml")
    offer = _offer(ml)
    agent_id = offer["agent_id"]["value"]
    wanted = [_reserved("cpus", 1, "ml"), _reserved("mem", 128, "ml")]
    task = task_info(agent_id, command="sleep 1000", resources=wanted)
    _accept(ml, offer, {"type": "RESERVE", "reserve": {"resources": wanted}},
            {"type": "LAUNCH", "launch": {"task_infos": [task]}})
    states, rest = [], None
    while rest is None or not states:   # the task's first update, and the offer of what it left
        event = ml.next_of(("UPDATE", "OFFERS"))
        if event["type"] == "UPDATE":
            states.append(event["update"]["status"]["state"])
            _acknowledge(ml, event["update"]["status"])
        else:
            rest = event["offers"]["offers"][0]
    assert states[0] in ("TASK_STARTING", "TASK_RUNNING")

    agent = _agent(m.master_address)
    assert agent["reserved_resources"] == {"ml": {"cpus": 1.0, "mem": 128.0, "disk": 0.0, "gpus": 0.0}}
    assert agent["unreserved_resources"]["cpus"] == 3.0 and agent["resources"]["cpus"] == 4.0
    (role,) = [r for r in requests.get(f"http://{m.master_address}/roles", timeout=10).json()["roles"]
               if r["name"] == "ml"]
    assert role["reserved"] == {"cpus": 1.0, "mem": 128.0}

    # Another role is never offered ml's reservation: once the task ends, only ml is. (ml refuses the
    # unreserved rest for long, so that the other role gets it.)
    assert _split(rest) == ({"cpus": 3.0, "mem": 896.0, "disk": 100.0}, {})
    ml.call({"type": "DECLINE", "framework_id": {"value": ml.framework_id},
             "decline": {"offer_ids": [rest["id"]], "filters": {"refuse_seconds": 3600}}})
    other = _subscribe(raw, m.master_address, "other")
    seen = _split(_offer(other))
    assert seen[1] == {} and seen[0]["cpus"] <= 3.0
    ml.call({"type": "KILL", "framework_id": {"value": ml.framework_id}, "kill": {"task_id": task["task_id"]}})
    back = _offer(ml, lambda o: bool(_split(o)[1]), timeout=15)
    assert _split(back)[1] == {"cpus": 1.0, "mem": 128.0}
    reserved = [r for r in back["resources"] if r.get("reservations")]
    assert all("role" not in r and r["reservations"] == [{"type": "DYNAMIC", "role": "ml"}] for r in reserved)

    _accept(ml, back, {"type": "UNRESERVE", "unreserve": {"resources": reserved}})
    wait_until(lambda: _agent(m.master_address)["reserved_resources"] == {}, 10, "the reservation to be gone")
    assert _agent(m.master_address)["unreserved_resources"]["cpus"] == 4.0


def test_a_framework_cannot_reserve_for_another_role_or_what_it_was_not_offered(cluster, raw) -> None:
    """Invalid RESERVEs are dropped, as Mesos drops them: a LAUNCH that needed the reservation then fails."""
    m = cluster([{"resources": "cpus:2;mem:512"}])
    ml = _subscribe(raw, m.master_address, "ml")
    offer = _offer(ml)
    agent_id = offer["agent_id"]["value"]
    stranger = [_reserved("cpus", 1, "someone-else")]
    too_much = [_reserved("cpus", 9, "ml")]
    task = task_info(agent_id, command="sleep 1000", resources=[_reserved("cpus", 1, "ml")])
    _accept(ml, offer, {"type": "RESERVE", "reserve": {"resources": stranger}},
            {"type": "RESERVE", "reserve": {"resources": too_much}},
            {"type": "LAUNCH", "launch": {"task_infos": [task]}})
    status = ml.next_of("UPDATE")["update"]["status"]
    assert status["state"] == "TASK_ERROR"
    assert _agent(m.master_address)["reserved_resources"] == {}


def test_the_operator_reserves_for_a_role_and_only_that_role_is_offered_it(cluster, raw) -> None:
    m = cluster([{"resources": "cpus:2;mem:1024"}])
    batch = _subscribe(raw, m.master_address, "batch")
    held = _offer(batch)   # batch holds the whole agent: the reservation must rescind it
    agent_id = held["agent_id"]["value"]
    answer = _reserve(m.master_address, agent_id, [_reserved("cpus", 1, "ml")])
    assert (answer.status_code, answer.text) == (202, "")
    assert batch.next_of("RESCIND")["rescind"]["offer_id"] == held["id"]
    plain, reserved = _split(_offer(batch))
    assert reserved == {} and plain["cpus"] == 1.0

    ml = _subscribe(raw, m.master_address, "ml")
    assert _split(_offer(ml, lambda o: bool(_split(o)[1])))[1] == {"cpus": 1.0}
    roles = {r["name"]: r for r in requests.get(f"http://{m.master_address}/roles", timeout=10).json()["roles"]}
    assert roles["ml"]["reserved"] == {"cpus": 1.0} and roles["ml"]["quota"]["consumed"]["cpus"] == 1.0
    metrics = requests.get(f"http://{m.master_address}/metrics/snapshot", timeout=10).json()
    assert metrics["allocator/mesos/quota/roles/ml/resources/cpus/consumed"] == 1.0   # its reservation
    agents = _operator(m.master_address, {"type": "GET_AGENTS"}).json()["get_agents"]["agents"]
    total = agents[0]["total_resources"]
    assert {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1.0}, "role": "ml", "reservation": {},
            "reservations": [{"type": "DYNAMIC", "role": "ml"}]} in total
    assert [r["scalar"]["value"] for r in agents[0]["agent_info"]["resources"] if r["name"] == "cpus"] == [2.0]


def test_bad_reservation_calls_get_mesos_answers_and_change_nothing(cluster) -> None:
    m = cluster([{"resources": "cpus:2;mem:1024;disk:100;ports:[31000-31100]"}])
    agent = _agent(m.master_address)
    agent_id, prefix = agent["id"], f"Invalid RESERVE operation on agent {agent['id']} at {agent['pid']} " \
                                     f"({agent['hostname']}): "
    cases = [
        (_reserve(m.master_address, "nope", [_reserved("cpus", 1, "ml")]), 400, "No agent found with specified ID"),
        (_reserve(m.master_address, agent_id, [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5}}]),
         400, prefix + "Resource cpus:0.5 is not dynamically reserved"),
        (_reserve(m.master_address, agent_id, [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5},
                                                "role": "ml"}]),
         400, prefix + "Resource cpus(reservations: [(STATIC,ml)]):0.5 is not dynamically reserved"),
        (_reserve(m.master_address, agent_id, [_reserved("cpus", 5, "ml")]), 409,
         "cpus:2; mem:1024; disk:100; ports:[31000-31100] does not contain cpus:5"),
        (_reserve(m.master_address, agent_id, [_reserved("cpus", 1, "ml")], "UNRESERVE_RESOURCES"), 409,
         None),
    ]
    for answer, status, text in cases:
        assert answer.status_code == status, answer.text
        if text is not None:
            assert answer.text == text
    assert "does not contain cpus(reservations: [(DYNAMIC,ml)]):1" in cases[-1][0].text
    assert _agent(m.master_address)["reserved_resources"] == {}


def test_a_reservation_outlives_a_master_restart(cluster) -> None:
    """The agent keeps what the master reserved (CHECKPOINT_RESOURCES) and tells the new master."""
    m = cluster([{"resources": "cpus:2;mem:1024"}])
    agent_id = _agent(m.master_address)["id"]
    assert _reserve(m.master_address, agent_id, [_reserved("mem", 256, "ml", "ops")]).status_code == 202
    expected = {"ml": {"cpus": 0.0, "mem": 256.0, "disk": 0.0, "gpus": 0.0}}
    wait_until(lambda: requests.get(f"http://{m.agent_addresses[0]}/state", timeout=10).json()
               ["reserved_resources"] == expected, 10, "the agent to keep the reservation")
    m.restart_master()

    def known() -> bool:
        try:
            return _agent(m.master_address)["reserved_resources"] == expected
        except (requests.RequestException, ValueError):
            return False
    wait_until(known, 30, "the new master to learn the reservation from the agent")
    unreserved = _reserve(m.master_address, agent_id, [_reserved("mem", 256, "ml", "ops")], "UNRESERVE_RESOURCES")
    assert unreserved.status_code == 202, unreserved.text
    wait_until(lambda: requests.get(f"http://{m.agent_addresses[0]}/state", timeout=10).json()
               ["reserved_resources"] == {}, 10, "the agent to drop the reservation")


def test_a_reservation_names_only_the_principal_who_asks(cluster) -> None:
    m = cluster([{"resources": "cpus:2;mem:1024"}], credentials={"ops": "ops-secret"})
    auth = ("ops", "ops-secret")
    agent = _agent(m.master_address, auth)
    other = _reserve(m.master_address, agent["id"], [_reserved("cpus", 1, "ml", "mallory")], auth=auth)
    assert other.status_code == 400
    assert other.text.endswith("Resource cpus(reservations: [(DYNAMIC,ml,mallory)]):1 is reserved by principal "
                               "'mallory', but the request comes from principal 'ops'")
    assert _reserve(m.master_address, agent["id"], [_reserved("cpus", 1, "ml", "ops")], auth=auth).status_code == 202
    assert _reserve(m.master_address, agent["id"], [_reserved("cpus", 1, "ml", "ops")]).status_code == 401



def _volume(volume_id: str, path: str, size: float, role: str = "ml") -> dict[str, Any]:
    return {**_reserved("disk", size, role), "disk": {"persistence": {"id": volume_id},
                                                     "volume": {"mode": "RW", "container_path": path}}}


def _volumes_call(master: str, kind: str, agent_id: str, volumes: list[dict]) -> requests.Response:
    return _operator(master, {"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, "volumes": volumes}})


def _run_on(sub: Any, command: str, resources: list[dict]) -> dict[str, Any]:
    """Launch one process task on the next offer holding `resources` (its volume); its last status."""
    offer = _offer(sub, lambda o: any(r.get("disk") for r in o["resources"]), timeout=15)
    task = task_info(offer["agent_id"]["value"], command=command, resources=resources)
    _accept(sub, offer, {"type": "LAUNCH", "launch": {"task_infos": [task]}})
    return _end_of(sub, task["task_id"])


def _end_of(sub: Any, task_id: dict[str, str]) -> dict[str, Any]:
    """The task's terminal status (updates acknowledged, offers given back meanwhile)."""
    return _ends_of(sub, [task_id])[task_id["value"]]


def _ends_of(sub: Any, task_ids: list[dict[str, str]]) -> dict[str, dict[str, Any]]:
    """Each task's terminal status, by task id, in whatever order they end."""
    ended: dict[str, dict[str, Any]] = {}
    wanted = {t["value"] for t in task_ids}
    deadline = Deadline(30)
    while not deadline.passed() and set(ended) != wanted:
        event = sub.next_of(("UPDATE", "OFFERS"), deadline.left())
        if event["type"] == "OFFERS":   # not needed now: given back, to come again
            _decline(sub, event["offers"]["offers"])
            continue
        status = event["update"]["status"]
        _acknowledge(sub, status)
        if status["task_id"]["value"] in wanted and status["state"] not in ("TASK_STARTING", "TASK_RUNNING"):
            ended[status["task_id"]["value"]] = status
    if set(ended) != wanted:
        raise TimeoutError(f"tasks {sorted(wanted - set(ended))} did not end")
    return ended


def test_what_a_task_writes_to_a_persistent_volume_the_next_task_reads(cluster, raw) -> None:
    """Real processes (as user nobody): the volume outlives the task that wrote it, DESTROY while a task uses
    it is refused, and DESTROY removes it and its data."""
    m = cluster([{"resources": "cpus:2;mem:512;disk:200"}], simulate=False, use_docker=False)
    agent_id = _agent(m.master_address)["id"]
    assert _reserve(m.master_address, agent_id, [_reserved("disk", 100, "ml")]).status_code == 202
    volume = _volume("ckpt", "checkpoints", 64)
    created = _volumes_call(m.master_address, "CREATE_VOLUMES", agent_id, [volume])
    assert (created.status_code, created.text) == (202, "")
    directory = m.work_dir / "agent-0" / "volumes" / "roles" / "ml" / "ckpt"
    wait_until(directory.is_dir, 10, "the agent to make the volume's directory")

    ml = _subscribe(raw, m.master_address, "ml")
    wrote = _run_on(ml, "echo step-100 > checkpoints/latest", [volume, {"name": "cpus", "type": "SCALAR",
                                                                            "scalar": {"value": 0.1}}])
    assert wrote["state"] == "TASK_FINISHED", wrote.get("message")
    assert (directory / "latest").read_text() == "step-100\n"
    read = _run_on(ml, "test \"$(cat checkpoints/latest)\" = step-100", [volume])
    assert read["state"] == "TASK_FINISHED", read.get("message")

    offer = _offer(ml, lambda o: any(r.get("disk") for r in o["resources"]), timeout=15)
    task = task_info(agent_id, command="sleep 1000", resources=[volume])
    _accept(ml, offer, {"type": "LAUNCH", "launch": {"task_infos": [task]}})
    wait_until(lambda: _agent(m.master_address)["used_resources"]["disk"] == 64.0, 10, "the task to run")
    busy = _volumes_call(m.master_address, "DESTROY_VOLUMES", agent_id, [volume])
    assert (busy.status_code, busy.text) == (400, "Invalid DESTROY operation: Persistent volumes in use: ckpt")
    ml.call({"type": "KILL", "framework_id": {"value": ml.framework_id}, "kill": {"task_id": task["task_id"]}})
    assert _end_of(ml, task["task_id"])["state"] == "TASK_KILLED"

    # ml holds an offer of the volume now: DESTROY rescinds it
    destroyed = _volumes_call(m.master_address, "DESTROY_VOLUMES", agent_id, [volume])
    assert (destroyed.status_code, destroyed.text) == (202, "")
    wait_until(lambda: not directory.exists(), 10, "the agent to remove the volume and its data")
    assert _agent(m.master_address)["reserved_resources"]["ml"]["disk"] == 100.0
    gone = _volumes_call(m.master_address, "DESTROY_VOLUMES", agent_id, [volume])
    assert (gone.status_code, gone.text) == (400, "Invalid DESTROY operation: Persistent volumes not found")


def test_a_framework_creates_a_volume_from_its_offer(cluster, raw) -> None:
    m = cluster([{"resources": "cpus:2;mem:512;disk:200"}])
    ml = _subscribe(raw, m.master_address, "ml")
    offer = _offer(ml)
    disk, volume = [_reserved("disk", 50, "ml")], _volume("data", "data", 50)
    _accept(ml, offer, {"type": "RESERVE", "reserve": {"resources": disk}},
            {"type": "CREATE", "create": {"volumes": [volume]}},
            {"type": "CREATE", "create": {"volumes": [_volume("data", "again", 1)]}})   # dropped: not unique
    back = _offer(ml, lambda o: any(r.get("disk", {}).get("persistence") for r in o["resources"]), timeout=15)
    (offered,) = [r for r in back["resources"] if r.get("disk")]
    assert offered["disk"] == {"persistence": {"id": "data"}, "volume": {"mode": "RW", "container_path": "data"}}
    assert offered["scalar"]["value"] == 50.0
    _accept(ml, back, {"type": "DESTROY", "destroy": {"volumes": [offered]}})
    total = _operator(m.master_address, {"type": "GET_AGENTS"}).json()["get_agents"]["agents"][0]["total_resources"]
    assert not any(r.get("disk") for r in total)   # ACCEPT applies before it is answered
    assert _agent(m.master_address)["reserved_resources"]["ml"]["disk"] == 50.0


def test_an_unacknowledged_operation_outlives_a_master_restart(cluster, raw) -> None:
    """The agent keeps the operations the master follows on it (CHECKPOINT_OPERATIONS) and reports them when it
    re-registers: the new master lists them, reconciles them as FINISHED (not UNKNOWN), sends the unacknowledged
    status again to the re-subscribed framework, and forgets them, on the agent too, once acknowledged."""
    m = cluster([{"resources": "cpus:2;mem:1024"}])
    info = {"user": "nobody", "name": "in-ml", "role": "ml", "failover_timeout": 600,
            "capabilities": [{"type": "RESERVATION_REFINEMENT"}]}
    sub = raw(m.master_address, {"type": "SUBSCRIBE", "subscribe": {"framework_info": info}})
    offer = _offer(sub)
    agent_id = offer["agent_id"]["value"]
    reserve = {"type": "RESERVE", "id": {"value": "op-1"}, "reserve": {"resources": [_reserved("cpus", 1, "ml")]}}
    _accept(sub, offer, reserve)
    finished = sub.next_of("UPDATE_OPERATION_STATUS")["update_operation_status"]["status"]
    assert finished["state"] == "OPERATION_FINISHED"
    agent_api = f"http://{m.agent_addresses[0]}/api/v1"

    def kept_by_agent() -> list[dict[str, Any]]:
        return requests.post(agent_api, json={"type": "GET_OPERATIONS"}, timeout=10).json()[
            "get_operations"].get("operations", [])
    wait_until(lambda: len(kept_by_agent()) == 1, 10, "the agent to keep the operation")
    sub.close()
    m.restart_master()

    def listed() -> list[dict[str, Any]]:
        try:
            return _operator(m.master_address, {"type": "GET_OPERATIONS"}).json()["get_operations"].get(
                "operations", [])
        except (requests.RequestException, ValueError):
            return []
    wait_until(lambda: len(listed()) == 1, 30, "the new master to learn the operation from the agent")
    assert listed()[0]["latest_status"] == finished
    again = raw(m.master_address, {"type": "SUBSCRIBE", "framework_id": {"value": sub.framework_id},
                                   "subscribe": {"framework_info": {**info, "id": {"value": sub.framework_id}}}},
                read_timeout_s=30)   # the status goes again 10 s after the agent re-registered: no event till then
    assert again.framework_id == sub.framework_id
    reconciled = again.call({"type": "RECONCILE_OPERATIONS", "framework_id": {"value": again.framework_id},
                             "reconcile_operations": {"operations": [{"operation_id": {"value": "op-1"},
                                                                      "agent_id": {"value": agent_id}}]}})
    assert reconciled.status_code == 202, reconciled.text
    answer = again.next_of("UPDATE_OPERATION_STATUS")["update_operation_status"]["status"]
    assert answer == {k: v for k, v in finished.items() if k != "uuid"}
    resent = again.next_of("UPDATE_OPERATION_STATUS", timeout=20)["update_operation_status"]["status"]
    assert resent == finished   # the unacknowledged status, sent again by the new master
    acked = again.call({"type": "ACKNOWLEDGE_OPERATION_STATUS", "framework_id": {"value": again.framework_id},
                        "acknowledge_operation_status": {"agent_id": {"value": agent_id},
                                                         "operation_id": {"value": "op-1"},
                                                         "uuid": finished["uuid"]["value"]}})
    assert acked.status_code == 202, acked.text
    wait_until(lambda: listed() == [] and kept_by_agent() == [], 10, "master and agent to forget the operation")


def test_tasks_share_a_shared_volume_at_once(cluster, raw) -> None:
    """A shared persistent volume (`shared: {}`) is offered again while a task uses it, to a framework with the
    capability SHARED_RESOURCES: a second task uses it at the same time and reads what the first wrote."""
    m = cluster([{"resources": "cpus:2;mem:512;disk:200"}], simulate=False, use_docker=False)
    agent_id = _agent(m.master_address)["id"]
    assert _reserve(m.master_address, agent_id, [_reserved("disk", 100, "ml")]).status_code == 202
    volume = {**_volume("common", "common", 64), "shared": {}}
    created = _volumes_call(m.master_address, "CREATE_VOLUMES", agent_id, [volume])
    assert (created.status_code, created.text) == (202, "")
    info = {"user": "nobody", "name": "sharer", "role": "ml",
            "capabilities": [{"type": "RESERVATION_REFINEMENT"}, {"type": "SHARED_RESOURCES"}]}
    ml = raw(m.master_address, {"type": "SUBSCRIBE", "subscribe": {"framework_info": info}})
    cpus = {"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}}

    def shared_offer() -> dict[str, Any]:
        return _offer(ml, lambda o: any("shared" in r for r in o["resources"]), timeout=15)
    first = shared_offer()
    (offered,) = [r for r in first["resources"] if "shared" in r]
    assert offered["disk"]["persistence"]["id"] == "common" and offered["shared"] == {}
    writer = task_info(agent_id, command="echo hello > common/a; while [ ! -e common/b ]; do sleep 0.1; done",
                       resources=[volume, cpus])
    _accept(ml, first, {"type": "LAUNCH", "launch": {"task_infos": [writer]}})
    reader = task_info(agent_id, command="while [ ! -e common/a ]; do sleep 0.1; done; "
                                          "test \"$(cat common/a)\" = hello && touch common/b",
                       resources=[volume, cpus])
    _accept(ml, shared_offer(), {"type": "LAUNCH", "launch": {"task_infos": [reader]}})   # offered again, in use
    wait_until(lambda: _agent(m.master_address)["used_resources"]["disk"] == 128.0, 15, "both tasks to run")
    busy = _volumes_call(m.master_address, "DESTROY_VOLUMES", agent_id, [volume])
    assert (busy.status_code, busy.text) == (400, "Invalid DESTROY operation: Persistent volumes in use: common")
    ends = _ends_of(ml, [reader["task_id"], writer["task_id"]])
    assert {s["state"] for s in ends.values()} == {"TASK_FINISHED"}, ends


def test_a_nested_role_refines_its_parents_reservation_and_unreserving_gives_it_back(cluster, raw) -> None:
    """A reservation for `eng` is offered to a framework of `eng/ml`, which refines it for `eng/ml` (a stack of two
    reservations, with RESERVATION_REFINEMENT); its UNRESERVE gives it back to `eng`, as Mesos does."""
    m = cluster([{"resources": "cpus:2;mem:1024"}])
    agent_id = _agent(m.master_address)["id"]
    assert _reserve(m.master_address, agent_id, [_reserved("cpus", 1, "eng")]).status_code == 202
    ml = _subscribe(raw, m.master_address, "eng/ml")

    def reserved_in(offer: dict[str, Any]) -> list[dict[str, Any]]:
        return [r for r in offer["resources"] if r.get("reservations")]
    offer = _offer(ml, lambda o: bool(reserved_in(o)))
    (eng,) = reserved_in(offer)
    assert [r["role"] for r in eng["reservations"]] == ["eng"]
    refined = {**eng, "reservations": eng["reservations"] + [{"type": "DYNAMIC", "role": "eng/ml"}]}
    _accept(ml, offer, {"type": "RESERVE", "reserve": {"resources": [refined]}})
    offer = _offer(ml, lambda o: any(len(r["reservations"]) == 2 for r in reserved_in(o)))
    (mine,) = [r for r in reserved_in(offer) if len(r["reservations"]) == 2]
    assert [r["role"] for r in mine["reservations"]] == ["eng", "eng/ml"] and mine["scalar"]["value"] == 1.0
    assert set(_agent(m.master_address)["reserved_resources"]) == {"eng/ml"}
    _accept(ml, offer, {"type": "UNRESERVE", "unreserve": {"resources": [mine]}})
    wait_until(lambda: set(_agent(m.master_address)["reserved_resources"]) == {"eng"}, 10,
               "the cpus to be eng's again")
    offer = _offer(ml, lambda o: bool(reserved_in(o)))   # refined again, then through a master restart
    (eng,) = reserved_in(offer)
    _accept(ml, offer, {"type": "RESERVE", "reserve": {"resources": [refined]}})
    ml.close()
    m.restart_master()

    def reserved_for() -> set[str]:
        try:
            return set(_agent(m.master_address)["reserved_resources"])
        except (requests.RequestException, ValueError, KeyError):
            return set()
    wait_until(lambda: reserved_for() == {"eng/ml"}, 30, "the new master to learn the refinement from the agent")
    unreserved = _reserve(m.master_address, agent_id, [{k: v for k, v in refined.items() if k != "allocation_info"}],
                          "UNRESERVE_RESOURCES")
    assert unreserved.status_code == 202, unreserved.text
    assert reserved_for() == {"eng"}   # the stack came back whole: eng's reservation is under it
    wait_until(lambda: set(_agent(m.master_address)["reserved_resources"]) == {"eng"}, 10,
               "the cpus to be eng's again")
