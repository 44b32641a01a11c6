"""Dynamic reservations on a running master: a framework's RESERVE/UNRESERVE in ACCEPT and the operator API's
RESERVE_RESOURCES/UNRESERVE_RESOURCES. Reserved resources are offered to their role only, tasks launch on
them, `/master/state`, `/roles` and GET_AGENTS show them, bad calls get Mesos's status and text, and a
reservation outlives a master restart (the agent keeps it)."""

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
    info = {"user": "nobody", "name": f"in-{role}", "role": role}
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
            sub.call({"type": "DECLINE", "framework_id": {"value": sub.framework_id},
                      "decline": {"offer_ids": [offer["id"]], "filters": {"refuse_seconds": 0}}})
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
    assert all(r["role"] == "ml" and r["reservations"] == [{"type": "DYNAMIC", "role": "ml"}] for r in reserved)

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

