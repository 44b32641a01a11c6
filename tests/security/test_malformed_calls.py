"""A corpus of malformed scheduler calls against a real embedded master: each is refused, and nothing is lost.

The attack, for every case: a framework (anyone who can reach the master)
sends a call that is malformed in one field, hoping for a 500, an offer that
never comes back, or a record that breaks the master's views now and after a
restart (the audit of issue 14 found all three). Each case asserts:
- the answer: 400/413 naming the field (never a 500), or, for what Mesos
  judges per task (a negative scalar, reversed ranges, ...), 202 and a
  TASK_ERROR saying why;
- afterwards /master/state, /state-summary, /master/frameworks,
  /metrics/snapshot, /ui/state, /metrics and the operator API's GET_STATE
  answer 200 with strict JSON (no NaN or Infinity), and no framework but the
  case's own is registered;
- the offer's resources come back: the case's offer, declined (for a refused
  call the framework still holds it) or given back by the master (a 202
  ACCEPT), is offered again whole.
test_nothing_poisoned_survives_a_restart sends the SUBSCRIBE corpus again,
restarts the master and reads everything back.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.codec import message_from_dict
from scylla_singa.mesos.api.proto import scheduler_pb2
from scylla_singa.mesos.embedded import EmbeddedMesos
from scylla_singa.mesos.master.master_store import record_problem
from scylla_singa.ui import master_page
from tests.support.scheduler_stream import SchedulerStream

API = "/api/v1/scheduler"
JSON = "application/json"
PROTOBUF = "application/x-protobuf"
AGENT_CPUS = 4.0
# Every master here is secure, as by default; the corpus comes from an authenticated framework (the worse case:
# a buggy or hostile framework holding valid credentials).
SECRET = secrets.token_urlsafe(24)
CREDENTIALS = {"scylla": SECRET}
HTTP = requests.Session()
HTTP.auth = ("scylla", SECRET)


# ---- the master, shared by the corpus --------------------------------------------------------------

@pytest.fixture(scope="module")
def mesos(tmp_path_factory) -> Iterator[EmbeddedMesos]:
    """One master with one simulated agent (4 cpus) and the web UI's routes, for the whole corpus."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCYLLA_HOME", str(tmp_path_factory.mktemp("home")))
        m = EmbeddedMesos(1, simulate=True, credentials=CREDENTIALS, allocation_interval=0.1, retry_interval=0.5, heartbeat_interval=1.0,
                          work_dir=tmp_path_factory.mktemp("mesos"), master_routes=(master_page.routes,))
        m.start()
        try:
            yield m
        finally:
            m.stop()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} in JSON")


def strict_json(text: str) -> Any:
    """JSON as any parser reads it: NaN and Infinity (which Python's json writes and reads) refused."""
    return json.loads(text, parse_constant=_refuse_constant)


def assert_views_serve(address: str) -> dict[str, Any]:
    """Every view that shows frameworks answers 200 with strict JSON; /master/state's document."""
    base = f"http://{address}"
    documents = {}
    for path in ("/master/state", "/state-summary", "/master/frameworks", "/metrics/snapshot", "/ui/state"):
        r = HTTP.get(base + path, timeout=10)
        assert r.status_code == 200, f"{path}: {r.status_code} {r.text[:300]}"
        documents[path] = strict_json(r.text)
    prometheus = HTTP.get(base + "/metrics", timeout=10)
    assert prometheus.status_code == 200 and "master_" in prometheus.text, prometheus.text[:300]
    operator = HTTP.post(base + "/api/v1", json={"type": "GET_STATE"}, timeout=10)
    assert operator.status_code == 200, operator.text[:300]
    strict_json(operator.text)
    return documents["/master/state"]


def offered_cpus(event: dict[str, Any]) -> float:
    return sum(r["scalar"]["value"] for o in event["offers"]["offers"] for r in o["resources"]
               if r["name"] == "cpus")


def next_whole_offer(sub: SchedulerStream) -> dict[str, Any]:
    """The next OFFERS event carrying all the agent's cpus (the stream's heartbeats bound each read)."""
    deadline_events = 200
    for _ in range(deadline_events):
        event = sub.next_of("OFFERS")
        if math.isclose(offered_cpus(event), AGENT_CPUS):
            return event["offers"]["offers"][0]
    raise AssertionError(f"no offer of all {AGENT_CPUS} cpus in {deadline_events} offers")


# ---- the corpus --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    """What a case's call may name: the framework and the offer it holds."""

    framework_id: str
    offer_id: str
    agent_id: str

    @property
    def fid(self) -> dict[str, str]:
        return {"value": self.framework_id}


Body = dict[str, Any] | bytes


@dataclass(frozen=True)
class Case:
    """One malformed call: `make(target)` gives its body (a dict is sent as JSON, or as protobuf when
    `media` says so; bytes are sent as they are); the answer must be `status` with `text` in it, or,
    with `task_error`, 202 and a TASK_ERROR whose message holds `text`."""

    name: str
    make: Callable[[Target], Body]
    status: int
    text: str
    media: str = JSON
    task_error: bool = False
    subscribe: bool = field(default=False)   # sent without the stream id, as a SUBSCRIBE is


def info(**fields: Any) -> dict[str, Any]:
    return {"user": "nobody", "name": "malformed", **fields}


def subscribe(**fields: Any) -> Callable[[Target], Body]:
    return lambda t: {"type": "SUBSCRIBE", "subscribe": {"framework_info": info(**fields)}}


def raw(text: str) -> Callable[[Target], Body]:
    """A body written by hand (numbers Python's json would not write); {FID}, {OFFER}, {AGENT} filled in."""
    return lambda t: (text.replace("{FID}", t.framework_id).replace("{OFFER}", t.offer_id)
                      .replace("{AGENT}", t.agent_id).encode())


def task(t: Target, **fields: Any) -> dict[str, Any]:
    out = {"name": "m", "task_id": {"value": "malformed-task"}, "agent_id": {"value": t.agent_id},
           "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}},
                         {"name": "mem", "type": "SCALAR", "scalar": {"value": 32}}],
           "command": {"value": "true"}}
    out.update(fields)
    return out


def accept(operations: Callable[[Target], Any], **accept_fields: Any) -> Callable[[Target], Body]:
    def make(t: Target) -> Body:
        body = {"offer_ids": [{"value": t.offer_id}], "operations": operations(t),
                "filters": {"refuse_seconds": 0}, **accept_fields}
        return {"type": "ACCEPT", "framework_id": t.fid, "accept": body}
    return make


def launch(**task_fields: Any) -> Callable[[Target], Any]:
    return lambda t: [{"type": "LAUNCH", "launch": {"task_infos": [task(t, **task_fields)]}}]


def launch_with(*resources: dict[str, Any]) -> Callable[[Target], Any]:
    return lambda t: [{"type": "LAUNCH", "launch": {"task_infos": [task(t, resources=list(resources))]}}]


def cpus(amount: Any) -> dict[str, Any]:
    return {"name": "cpus", "type": "SCALAR", "scalar": {"value": amount}}


def ports(*pairs: tuple[int, int]) -> dict[str, Any]:
    return {"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": b, "end": e} for b, e in pairs]}}


def call(kind: str, payload: Any) -> Callable[[Target], Body]:
    return lambda t: {"type": kind, "framework_id": t.fid, kind.lower(): payload(t) if callable(payload) else payload}


def nested(depth: int) -> Callable[[Target], Body]:
    """A DECLINE with `depth` nested arrays in a field Mesos ignores (so only the depth is wrong)."""
    return lambda t: (f'{{"type":"DECLINE","framework_id":{{"value":"{t.framework_id}"}},"decline":{{'
                      f'"offer_ids":[{{"value":"{t.offer_id}"}}],"ignored":' + "[" * depth + "]" * depth
                      + "}}").encode()


RAW_ACCEPT = ('{"type":"ACCEPT","framework_id":{"value":"{FID}"},"accept":{"offer_ids":[{"value":"{OFFER}"}],'
              '"filters":{"refuse_seconds":%s},"operations":[{"type":"LAUNCH","launch":{"task_infos":[{"name":"m",'
              '"task_id":{"value":"x"},"agent_id":{"value":"{AGENT}"},"command":{"value":"true"},'
              '"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":%s}}]}]}}]}}')

CASES = [
    # ---- SUBSCRIBE: FrameworkInfo fields that once poisoned /master/state (and the store) ----
    Case("subscribe-capabilities-string", subscribe(capabilities=["X"]), 400,
         "Not expecting a JSON string for field 'capabilities'", subscribe=True),
    Case("subscribe-failover-abc", subscribe(failover_timeout="abc"), 400,
         "Failed to parse 'abc' as a JSON number for field 'failover_timeout'", subscribe=True),
    Case("subscribe-failover-1e400", raw('{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n",'
                                         '"failover_timeout":1e400}}}'), 400,
         "'subscribe.framework_info.failover_timeout' is not a finite number (inf)", subscribe=True),
    Case("subscribe-failover-Infinity", subscribe(failover_timeout="Infinity"), 400,
         "'subscribe.framework_info.failover_timeout' is not a finite number (inf)", subscribe=True),
    Case("subscribe-failover-NaN", subscribe(failover_timeout="NaN"), 400,
         "Failed to parse 'NaN' as a JSON number for field 'failover_timeout'", subscribe=True),
    Case("subscribe-failover-negative", subscribe(failover_timeout=-5), 400,
         "'subscribe.framework_info.failover_timeout' (-5) must not be negative", subscribe=True),
    Case("subscribe-failover-beyond-duration", subscribe(failover_timeout=1e300), 400,
         "'subscribe.framework_info.failover_timeout' (1e+300 seconds) is out of range", subscribe=True),
    Case("subscribe-info-number", lambda t: {"type": "SUBSCRIBE", "subscribe": {"framework_info": 5}}, 400,
         "Not expecting a JSON number for field 'framework_info'", subscribe=True),
    Case("subscribe-no-user", lambda t: {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"name": "n"}}}, 400,
         "Missing required fields", subscribe=True),
    Case("subscribe-roles-not-multi-role", subscribe(roles=["a"]), 400,
         "'FrameworkInfo.roles' must not be set when the framework is not MULTI_ROLE capable", subscribe=True),
    Case("subscribe-role-with-space", subscribe(role="a b"), 400, "Role 'a b' is invalid", subscribe=True),
    Case("subscribe-role-number", subscribe(role=7), 400, "Not expecting a JSON number for field 'role'",
         subscribe=True),
    Case("subscribe-huge-info", subscribe(labels={"labels": [{"key": "k", "value": "x" * 70_000}]}), 400,
         "bytes of JSON; this master keeps at most 65536", subscribe=True),
    Case("subscribe-id-mismatch", lambda t: {"type": "SUBSCRIBE", "framework_id": {"value": "a"},
                                             "subscribe": {"framework_info": info(id={"value": "b"})}}, 400,
         "'framework_id' differs from 'subscribe.framework_info.id'", subscribe=True),
    Case("subscribe-bare-NaN", raw('{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n",'
                                   '"failover_timeout":NaN}}}'), 400,
         "Failed to parse body into JSON: 'NaN' is not JSON", subscribe=True),
    # ---- ACCEPT: wrong JSON types and numbers no double holds: 400, the offer untouched ----
    Case("accept-mem-Infinity", accept(launch_with(cpus(1), {"name": "mem", "type": "SCALAR",
                                                            "scalar": {"value": "Infinity"}})), 400,
         "'accept.operations[0].launch.task_infos[0].resources[1].scalar.value' is not a finite number (inf)"),
    Case("accept-cpus-1e400", raw(RAW_ACCEPT % ("0", "1e400")), 400,
         "'accept.operations[0].launch.task_infos[0].resources[0].scalar.value' is not a finite number (inf)"),
    Case("accept-cpus-NaN", accept(launch_with(cpus("NaN"))), 400,
         "Failed to parse 'NaN' as a JSON number for field 'value'"),
    Case("accept-resources-number", accept(launch(resources=5)), 400,
         "Not expecting a JSON number for field 'resources'"),
    Case("accept-operations-number", accept(lambda t: 5), 400, "Not expecting a JSON number for field 'operations'"),
    Case("accept-offer-ids-number", lambda t: {"type": "ACCEPT", "framework_id": t.fid,
                                               "accept": {"offer_ids": 5}}, 400,
         "Not expecting a JSON number for field 'offer_ids'"),
    Case("accept-offer-id-number", lambda t: {"type": "ACCEPT", "framework_id": t.fid,
                                              "accept": {"offer_ids": [5]}}, 400,
         "Not expecting a JSON number for field 'offer_ids'"),
    Case("accept-refuse-1e400", raw(RAW_ACCEPT % ("1e400", "1")), 400,
         "'accept.filters.refuse_seconds' is not a finite number (inf)"),
    Case("accept-refuse-beyond-duration", accept(launch(), filters={"refuse_seconds": 1e12}), 400,
         "'accept.filters.refuse_seconds' (1e+12 seconds) is out of range: at most 9223372037 seconds"),
    Case("accept-kill-policy-string", accept(launch(kill_policy="x")), 400,
         "Not expecting a JSON string for field 'kill_policy'"),
    Case("accept-task-infos-object", accept(lambda t: [{"type": "LAUNCH", "launch": {"task_infos": {}}}]), 400,
         "Not expecting a JSON object for field 'task_infos'"),
    Case("accept-command-value-number", accept(launch(command={"value": 5})), 400,
         "Not expecting a JSON number for field 'value'"),
    Case("accept-ranges-string", accept(launch_with(cpus(1), {"name": "ports", "type": "RANGES",
                                                             "ranges": {"range": "31000-31001"}})), 400,
         "Not expecting a JSON string for field 'range'"),
    Case("accept-container-type-unknown", accept(launch(container={"type": "FOO", "docker": {"image": "x"}})), 400,
         "Failed to find enum for 'FOO'"),
    # An unknown name for an optional enum leaves the field unset, as in Mesos: an operation without a
    # type is ignored (202) and the offer's resources come back unused.
    Case("accept-operation-type-unknown", accept(lambda t: [{"type": "FLY"}]), 202, ""),
    # ---- ACCEPT: what Mesos judges per task: 202, TASK_ERROR, the offer's resources back ----
    Case("accept-cpus-negative", accept(launch_with(cpus(-1))), 202,
         "Invalid resources: Resource 'cpus:-1' is invalid: Invalid scalar resource: value < 0", task_error=True),
    Case("accept-ports-reversed", accept(launch_with(cpus(1), ports((31010, 31000)))), 202,
         "Invalid ranges resource: begin > end ([31010-31000])", task_error=True),
    Case("accept-ports-overlapping", accept(launch_with(cpus(1), ports((31000, 31005), (31003, 31009)))), 202,
         "Invalid ranges resource: overlapping ranges ([31000-31005] and [31003-31009])", task_error=True),
    Case("accept-set-duplicated", accept(launch_with(cpus(1), {"name": "gpu_ids", "type": "SET",
                                                              "set": {"item": ["a", "a"]}})), 202,
         "Invalid set resource: duplicated elements", task_error=True),
    Case("accept-more-than-offered", accept(launch_with(cpus(64))), 202, "is more than available", task_error=True),
    Case("accept-no-resources", accept(launch(resources=[])), 202, "uses no resources", task_error=True),
    # ---- body-level: not JSON, too deep, too big ----
    Case("body-not-json", lambda t: b"{nope", 400, "Failed to parse body into JSON"),
    Case("body-not-utf8", lambda t: b'{"type":"\xff\xfe"}', 400, "Failed to parse body into JSON"),
    Case("body-array", lambda t: b"[]", 400, "Failed to convert JSON into Call protobuf: Expecting a JSON object"),
    Case("body-nested-100", nested(100), 400, "Failed to parse body into JSON: nested deeper than 64 levels"),
    Case("body-nested-100000", nested(100_000), 400, "Failed to parse body into JSON: nested deeper than 64 levels"),
    Case("body-17MB", lambda t: b'{"type":"REVIVE","x":"' + b"x" * (17 * 1024 * 1024) + b'"}', 413,
         "Maximum request body size 16777216 exceeded"),
    Case("type-unknown", lambda t: {"type": "FLY", "framework_id": t.fid}, 400, "Expecting 'type' to be present"),
    # ---- DECLINE, KILL, RECONCILE, ACKNOWLEDGE, MESSAGE ----
    Case("decline-offer-ids-string", call("DECLINE", {"offer_ids": "O1"}), 400,
         "Not expecting a JSON string for field 'offer_ids'"),
    Case("decline-refuse-Infinity", call("DECLINE", lambda t: {"offer_ids": [{"value": t.offer_id}],
                                                               "filters": {"refuse_seconds": "Infinity"}}), 400,
         "'decline.filters.refuse_seconds' is not a finite number (inf)"),
    Case("decline-filters-number", call("DECLINE", lambda t: {"offer_ids": [{"value": t.offer_id}], "filters": 5}),
         400, "Not expecting a JSON number for field 'filters'"),
    Case("kill-policy-string", call("KILL", {"task_id": {"value": "t"}, "kill_policy": "x"}), 400,
         "Not expecting a JSON string for field 'kill_policy'"),
    Case("kill-grace-1e400", raw('{"type":"KILL","framework_id":{"value":"{FID}"},"kill":{"task_id":{"value":"t"},'
                                 '"kill_policy":{"grace_period":{"nanoseconds":1e400}}}}'), 400,
         "Expecting an integer for field 'nanoseconds', got inf"),
    Case("kill-grace-beyond-int64", call("KILL", {"task_id": {"value": "t"},
                                                  "kill_policy": {"grace_period": {"nanoseconds": 10 ** 30}}}), 400,
         "Invalid value for field 'nanoseconds'"),
    Case("kill-grace-5000-digits", raw('{"type":"KILL","framework_id":{"value":"{FID}"},"kill":{"task_id":{"value":'
                                       '"t"},"kill_policy":{"grace_period":{"nanoseconds":' + "9" * 5000 + '}}}}'),
         400, "Failed to parse body into JSON: Exceeds the limit (4300 digits)"),
    Case("kill-no-task-id", call("KILL", {"agent_id": {"value": "a"}}), 400, "Missing required fields"),
    Case("reconcile-tasks-number", call("RECONCILE", {"tasks": 5}), 400, "Not expecting a JSON number for field 'tasks'"),
    Case("reconcile-task-id-number", call("RECONCILE", {"tasks": [{"task_id": 5}]}), 400,
         "Not expecting a JSON number for field 'task_id'"),
    Case("acknowledge-uuid-not-base64", call("ACKNOWLEDGE", {"agent_id": {"value": "a"}, "task_id": {"value": "t"},
                                                             "uuid": "!!"}), 400,
         "Failed to base64 decode bytes field 'uuid'"),
    Case("acknowledge-uuid-3-bytes", call("ACKNOWLEDGE", {"agent_id": {"value": "a"}, "task_id": {"value": "t"},
                                                          "uuid": "AAAA"}), 400, "Not a valid UUID"),
    Case("message-data-not-base64", call("MESSAGE", {"agent_id": {"value": "a"}, "executor_id": {"value": "e"},
                                                     "data": "%%"}), 400,
         "Failed to base64 decode bytes field 'data'"),
    # ---- protobuf bodies go through the same validation after decoding ----
    Case("protobuf-accept-cpus-NaN", accept(launch_with(cpus(float("nan")))), 400,
         "'accept.operations[0].launch.task_infos[0].resources[0].scalar.value' is not a finite number (nan)",
         media=PROTOBUF),
    Case("protobuf-subscribe-failover-inf", subscribe(failover_timeout=float("inf")), 400,
         "'subscribe.framework_info.failover_timeout' is not a finite number (inf)", media=PROTOBUF, subscribe=True),
    Case("protobuf-decline-refuse-inf", call("DECLINE", lambda t: {"offer_ids": [{"value": t.offer_id}],
                                                                   "filters": {"refuse_seconds": float("inf")}}),
         400, "'decline.filters.refuse_seconds' is not a finite number (inf)", media=PROTOBUF),
    Case("protobuf-garbage", lambda t: b"\xff\xff\xff", 400, "Failed to parse body into Call protobuf",
         media=PROTOBUF),
    Case("protobuf-accept-cpus-negative", accept(launch_with(cpus(-2.0))), 202,
         "Invalid scalar resource: value < 0", media=PROTOBUF, task_error=True),
]


def send(address: str, case: Case, body: Body, stream_id: str | None) -> requests.Response:
    headers = {"Content-Type": case.media, "Accept": JSON}
    if stream_id is not None and not case.subscribe:
        headers["Mesos-Stream-Id"] = stream_id
    if isinstance(body, dict):
        data = (message_from_dict(scheduler_pb2.Call, body).SerializeToString() if case.media == PROTOBUF
                else json.dumps(body).encode())
    else:
        data = body
    return HTTP.post(f"http://{address}{API}", data=data, headers=headers, timeout=30)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_malformed_call_is_refused_and_loses_nothing(mesos, case: Case) -> None:
    """The attack: one malformed call, hoping for a 500, a leaked offer or a poisoned view (see module doc)."""
    address = mesos.master_address
    sub = SchedulerStream(address, auth=HTTP.auth, framework_info=info(name=case.name))
    try:
        offer = next_whole_offer(sub)
        target = Target(sub.framework_id, offer["id"]["value"], offer["agent_id"]["value"])
        answer = send(address, case, case.make(target), sub.stream_id)
        assert answer.status_code != 500, answer.text
        assert (answer.status_code, case.text in answer.text or case.task_error) == (case.status, True), \
            f"{answer.status_code} {answer.text[:300]!r}"
        if case.task_error:
            update = sub.next_of("UPDATE")["update"]["status"]
            assert (update["state"], update["reason"]) == ("TASK_ERROR", "REASON_TASK_INVALID"), update
            assert case.text in update["message"], update["message"]
        else:
            # the framework still holds its offer: declined, it comes back whole
            declined = sub.call({"type": "DECLINE", "framework_id": {"value": sub.framework_id},
                                 "decline": {"offer_ids": [offer["id"]], "filters": {"refuse_seconds": 0}}})
            assert declined.status_code == 202, declined.text
        next_whole_offer(sub)
        state = assert_views_serve(address)
        assert [f["id"] for f in state["frameworks"]] == [sub.framework_id]
        assert state["frameworks"][0]["used_resources"]["cpus"] == 0
    finally:
        sub.teardown()


def test_nothing_poisoned_survives_a_restart(mesos) -> None:
    """The attack: poisoned SUBSCRIBEs (and one good one), hoping a record breaks the master after a restart.

    The good framework is persisted, found again by the restarted master,
    and every stored record passes the checks a SUBSCRIBE passes.
    """
    address = mesos.master_address
    for case in (c for c in CASES if c.subscribe):
        answer = send(address, case, case.make(Target("", "", "")), None)
        assert answer.status_code == case.status and case.text in answer.text, (case.name, answer.text)
    good = SchedulerStream(address, auth=HTTP.auth, framework_info=info(name="survivor", failover_timeout=300,
                                         capabilities=[{"type": "X_UNKNOWN_CAPABILITY"}]))
    assert good.framework_id
    store = Path(mesos.master_config.work_dir) / "master.json"
    wait_until(lambda: good.framework_id in (strict_json(store.read_text()) if store.exists() else {})
               .get("frameworks", {}), 10, "the survivor in the store")
    good.close()
    mesos.restart_master()
    state = assert_views_serve(mesos.master_address)
    assert good.framework_id in [f["id"] for f in state["frameworks"]]
    records = strict_json(store.read_text())["frameworks"]
    assert {fid: record_problem(fid, rec) for fid, rec in records.items()} == {fid: None for fid in records}


def test_a_master_skips_poisoned_records_in_its_store(tmp_path, monkeypatch, caplog) -> None:
    """The attack: a store written before SUBSCRIBE was validated (or edited by hand) holds records that
    once broke /master/state; the master starts, skips each with a log line naming why, keeps the good one."""
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))
    good_info = {"user": "u", "name": "good", "id": {"value": "good"}, "failover_timeout": 300.0}
    poisoned = {
        "caps-strings": ({"user": "u", "name": "n", "capabilities": ["X"]}, 60, "does not convert"),
        "failover-inf": ({"user": "u", "name": "n"}, float("inf"), "failover_timeout inf is not a finite"),
        "failover-text": ({"user": "u", "name": "n"}, "abc", "failover_timeout 'abc' is not a finite"),
        "info-inf": ({"user": "u", "name": "n", "failover_timeout": float("inf")}, 60, "is not a finite number"),
        "info-list": ([1, 2], 60, "it has no FrameworkInfo object"),
        "role-bad": ({"user": "u", "name": "n", "role": "-x"}, 60, "Role '-x' is invalid"),
        "other-id": ({"user": "u", "name": "n", "id": {"value": "someone-else"}}, 60, "names another framework id"),
    }
    records = {fid: {"info": info_, "failover_timeout": timeout, "registered_time": 1.0}
               for fid, (info_, timeout, _) in poisoned.items()}
    records["good"] = {"info": good_info, "failover_timeout": 300.0, "registered_time": 1.0}
    work_dir = tmp_path / "mesos"
    (work_dir / "master").mkdir(parents=True)
    # Python's json writes Infinity, as a master before issue 14 did
    (work_dir / "master" / "master.json").write_text(json.dumps({"frameworks": records}))
    with caplog.at_level("ERROR", logger="scylla_singa.mesos.master.master_store"):
        m = EmbeddedMesos(1, simulate=True, credentials=CREDENTIALS, allocation_interval=0.2, retry_interval=0.5, work_dir=work_dir,
                          master_routes=(master_page.routes,))
        try:
            m.start()
            state = assert_views_serve(m.master_address)
            assert [f["id"] for f in state["frameworks"]] == ["good"]
        finally:
            m.stop()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for fid, (_, _, why) in poisoned.items():
        assert f"skipping framework '{fid}'" in logged and why in logged, (fid, logged)


def test_a_store_that_is_not_json_starts_an_empty_master(tmp_path, monkeypatch) -> None:
    """The attack: the store file truncated or overwritten with garbage; the master starts with no frameworks."""
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))
    work_dir = tmp_path / "mesos"
    (work_dir / "master").mkdir(parents=True)
    for garbage in (b"\xff{", b"[1, 2]", b'{"frameworks": 5}'):
        (work_dir / "master" / "master.json").write_bytes(garbage)
        m = EmbeddedMesos(1, simulate=True, credentials=CREDENTIALS, allocation_interval=0.2, retry_interval=0.5, work_dir=work_dir)
        try:
            m.start()
            assert assert_views_serve_without_ui(m.master_address)["frameworks"] == []
        finally:
            m.stop()


def assert_views_serve_without_ui(address: str) -> dict[str, Any]:
    """/master/state and /master/frameworks serve strict JSON (a master without the UI's routes)."""
    for path in ("/master/frameworks", "/state-summary", "/metrics/snapshot"):
        r = HTTP.get(f"http://{address}{path}", timeout=10)
        assert r.status_code == 200, (path, r.text[:300])
        strict_json(r.text)
    return strict_json(HTTP.get(f"http://{address}/master/state", timeout=10).text)
