#!/usr/bin/env python3
"""Record a real Apache Mesos master's and agent's HTTP answers as JSON fixtures.

Why: our own master and agent imitate Mesos; tests of the framework's HTTP
reads, and the work on Mesos fidelity, need the shapes real Mesos writes,
taken from a live cluster rather than from memory. This tool drives a
running master and agent as a framework and an operator would, and writes
every request and answer (status, headers, body) under OUT:

    master/<endpoint>.<phase>.json     GET /master/state, /state-summary, ... (phase: running | after)
    agent/<endpoint>.<phase>.json      GET /state, /flags, /containers, /files/read, ...
    operator/<CALL>.<phase>.json       POST /api/v1 {"type": CALL} (JSON)
    operator/SUBSCRIBE.events.json     the operator event stream, in order
    scheduler/*.json                   SUBSCRIBE headers and events, ACCEPT, ACKNOWLEDGE, KILL, TEARDOWN
    errors/*.json                      answers to malformed or misdirected calls
    index.json                         Mesos version, time, the command line, what each task did

It launches, in one ACCEPT, Docker tasks that run, finish, fail, are killed,
are refused (more resources than offered), fail their fetch, and read job
files delivered by volume or through WebHDFS as a non-root image user, so the
fixtures hold task statuses with reasons, `network_infos` and `data`.

Only the addresses given on the command line are contacted. Docker work goes
to the agent's engine through the agent; the tool itself only creates (and
removes) the attachable overlay it names with --overlay.

    .venv/bin/python tools/record_apache_mesos.py --master 127.0.0.1:5050 --agent 127.0.0.1:5051 \
        --out tests/fixtures/apache_mesos --overlay mr-fixtures --webhdfs http://172.17.0.2:9870
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scylla_singa.mesos.api.recordio import Decoder  # noqa: E402

JSON = "application/json"
MAX_EVENTS = 400
TASK_CPUS = 0.1
TASK_MEM = 32.0
TERMINAL = {"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED",
            "TASK_GONE", "TASK_GONE_BY_OPERATOR"}


class RecordError(RuntimeError):
    """The cluster did not do what the recording needs; the message says what was waited for."""


def wait_for(condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise RecordError(f"{what}: not within {timeout_s:.0f}s")
        time.sleep(0.2)


def split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def body_of(raw: bytes, content_type: str) -> Any:
    """JSON bodies parsed, anything else as text (so fixtures stay readable)."""
    text = raw.decode("utf-8", errors="replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


class Fixtures:
    """Writes one JSON file per exchange under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, record: dict[str, Any]) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")


def exchange(address: str, method: str, path: str, body: Any = None,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
    """One HTTP request, not following redirects; the request and the whole answer as a dict."""
    host, port = split(address)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    hdrs = dict(headers or {})
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    request: dict[str, Any] = {"method": method, "address": address, "path": path, "headers": hdrs}
    if body is not None:
        request["body"] = body if not isinstance(body, bytes) else body.decode(errors="replace")
    return {"request": request,
            "response": {"status": resp.status, "reason": resp.reason, "headers": dict(resp.getheaders()),
                         "body": body_of(raw, resp.getheader("Content-Type", ""))}}


def stream_head(address: str, path: str, call: dict[str, Any], read_s: float = 3.0) -> dict[str, Any]:
    """POST a SUBSCRIBE and keep its status, headers and what arrives within `read_s`, then hang up."""
    host, port = split(address)
    conn = http.client.HTTPConnection(host, port, timeout=30)
    headers = {"Content-Type": JSON, "Accept": JSON}
    conn.request("POST", path, body=json.dumps(call).encode(), headers=headers)
    resp = conn.getresponse()
    out: dict[str, Any] = {"request": {"method": "POST", "address": address, "path": path, "headers": headers,
                                       "body": call},
                           "response": {"status": resp.status, "reason": resp.reason,
                                        "headers": dict(resp.getheaders())}}
    if resp.getheader("Transfer-Encoding") != "chunked":
        out["response"]["body"] = body_of(resp.read(), resp.getheader("Content-Type", ""))
        conn.close()
        return out
    decoder, events = Decoder(), []
    conn.sock.settimeout(0.5)
    deadline = time.monotonic() + read_s
    while time.monotonic() < deadline:
        try:
            chunk = resp.read1(65536)
        except (TimeoutError, OSError):
            continue
        except Exception:  # noqa: BLE001 - the master ended the stream
            break
        if not chunk:
            break
        events += [json.loads(r) for r in decoder.feed(chunk)]
    conn.close()
    out["events"] = events
    return out


class EventStream(threading.Thread):
    """A Mesos RecordIO event stream (scheduler or operator SUBSCRIBE), read on its own thread."""

    def __init__(self, address: str, path: str, call: dict[str, Any]) -> None:
        super().__init__(daemon=True, name=f"stream {path}")
        host, port = split(address)
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        self.conn.request("POST", path, body=json.dumps(call).encode(),
                          headers={"Content-Type": JSON, "Accept": JSON})
        self.resp = self.conn.getresponse()
        if self.resp.status != 200:
            raise RecordError(f"SUBSCRIBE to {address}{path} answered {self.resp.status}: "
                              f"{self.resp.read()[:300]!r}")
        self.request = {"method": "POST", "address": address, "path": path,
                        "headers": {"Content-Type": JSON, "Accept": JSON}, "body": call}
        self.headers = dict(self.resp.getheaders())
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.closed = False

    def run(self) -> None:
        decoder = Decoder()
        try:
            while not self.closed:
                chunk = self.resp.read1(65536)
                if not chunk:
                    break
                for record in decoder.feed(chunk):
                    with self.lock:
                        if len(self.events) < MAX_EVENTS:
                            self.events.append({"received_at": round(time.time(), 3),
                                                "event": json.loads(record)})
        except Exception:  # noqa: BLE001 - however the stream ends (closed by us or the master), it ends
            pass
        self.closed = True

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.events)

    def find(self, predicate: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        return [e["event"] for e in self.snapshot() if predicate(e["event"])]

    def close(self) -> None:
        self.closed = True
        try:
            self.conn.sock and self.conn.sock.shutdown(2)
        except OSError:
            pass
        self.conn.close()

    def record(self) -> dict[str, Any]:
        return {"request": self.request,
                "response": {"status": self.resp.status, "headers": self.headers},
                "events": self.snapshot()}


class Scheduler:
    """A v1 HTTP JSON scheduler: SUBSCRIBE on a stream, calls with its stream id, explicit ACKs."""

    def __init__(self, master: str, name: str, capabilities: list[str], roles: list[str] | None = None) -> None:
        info: dict[str, Any] = {"user": "root", "name": name, "failover_timeout": 60.0,
                                "capabilities": [{"type": c} for c in capabilities]}
        if roles is not None:
            info["roles"] = roles
        self.master = master
        self.stream = EventStream(master, "/api/v1/scheduler", {"type": "SUBSCRIBE",
                                                               "subscribe": {"framework_info": info}})
        self.stream.start()
        self.stream_id = self.stream.headers.get("Mesos-Stream-Id", "")
        sub = wait_for(lambda: self.stream.find(lambda e: e["type"] == "SUBSCRIBED"), 30, "SUBSCRIBED")
        self.framework_id = sub[0]["subscribed"]["framework_id"]["value"]
        self.acked: set[str] = set()
        self.first_ack: dict[str, Any] | None = None

    def call(self, kind: str, payload: dict[str, Any] | None = None, stream_id: str | None = None,
             framework_id: str | None = None) -> dict[str, Any]:
        call: dict[str, Any] = {"framework_id": {"value": framework_id or self.framework_id}, "type": kind}
        if payload is not None:
            call[kind.lower()] = payload
        return exchange(self.master, "POST", "/api/v1/scheduler", call,
                        {"Content-Type": JSON, "Accept": JSON,
                         "Mesos-Stream-Id": self.stream_id if stream_id is None else stream_id})

    def updates(self) -> list[dict[str, Any]]:
        return [e["update"]["status"] for e in self.stream.find(lambda e: e["type"] == "UPDATE")]

    def latest(self, task_id: str) -> dict[str, Any] | None:
        mine = [s for s in self.updates() if s["task_id"]["value"] == task_id]
        return mine[-1] if mine else None

    def outcome(self, task_id: str) -> dict[str, Any] | None:
        """The task's last update that is not an answer to a reconciliation."""
        mine = [s for s in self.updates()
                if s["task_id"]["value"] == task_id and s.get("reason") != "REASON_RECONCILIATION"]
        return mine[-1] if mine else None

    def acknowledge_all(self) -> None:
        """ACK every update with a uuid not yet acknowledged; keeps the first exchange for the fixtures."""
        for s in self.updates():
            if "uuid" in s and s["uuid"] not in self.acked and "agent_id" in s:
                self.acked.add(s["uuid"])
                answer = self.call("ACKNOWLEDGE", {"agent_id": s["agent_id"], "task_id": s["task_id"],
                                                   "uuid": s["uuid"]})
                self.first_ack = self.first_ack or answer

    def offers(self) -> list[dict[str, Any]]:
        return [o for e in self.stream.find(lambda e: e["type"] == "OFFERS") for o in e["offers"]["offers"]]


# -- the tasks ----------------------------------------------------------------
def scalar(name: str, value: float, allocation_info: dict | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {"name": name, "type": "SCALAR", "scalar": {"value": value}, "role": "*"}
    if allocation_info:
        r["allocation_info"] = allocation_info
    return r


def docker_task(tid: str, agent_id: str, image: str, command: str, network: str | None,
                volumes: list[dict] | None = None, uris: list[dict] | None = None, cpus: float = TASK_CPUS,
                grace_s: float = 3.0) -> dict[str, Any]:
    container: dict[str, Any] = {"type": "DOCKER", "docker": {
        "image": image, "network": "USER" if network else "BRIDGE", "force_pull_image": False,
        "parameters": [{"key": "label", "value": "mr.fixture=1"}]}}
    if network:
        container["network_infos"] = [{"name": network}]
        container["docker"]["parameters"].append({"key": "network-alias", "value": tid})
    if volumes:
        container["volumes"] = volumes
    command_info: dict[str, Any] = {"shell": True, "value": command,
                                    "environment": {"variables": [{"name": "MESOS_TASK_ID", "value": tid}]}}
    if uris:
        command_info["uris"] = uris
    return {"name": tid, "task_id": {"value": tid}, "agent_id": {"value": agent_id},
            "resources": [scalar("cpus", cpus), scalar("mem", TASK_MEM)],
            "command": command_info, "container": container,
            "kill_policy": {"grace_period": {"nanoseconds": int(grace_s * 1e9)}},
            "labels": {"labels": [{"key": "mr.fixture", "value": tid}]}}


def webhdfs_put(webhdfs: str, path: str, data: bytes) -> None:
    """Upload through WebHDFS: the NameNode answers 307 to a DataNode, which takes the bytes."""
    host = webhdfs.split("://", 1)[1].rstrip("/")
    first = exchange(host, "PUT", f"/webhdfs/v1{path}?op=CREATE&overwrite=true&user.name=scylla")
    location = first["response"]["headers"].get("Location", "")
    if first["response"]["status"] != 307 or not location.startswith("http://"):
        raise RecordError(f"WebHDFS CREATE {path} answered {first['response']['status']}")
    rest = location[len("http://"):]
    dn, _, dn_path = rest.partition("/")
    second = exchange(dn, "PUT", "/" + dn_path, data, {"Content-Type": "application/octet-stream"})
    if second["response"]["status"] != 201:
        raise RecordError(f"WebHDFS write of {path} answered {second['response']['status']}")


def plan_tasks(args: argparse.Namespace, agent_id: str, run_id: str) -> dict[str, dict[str, Any]]:
    """Task id -> TaskInfo: each shows one behaviour the framework meets on real Mesos."""
    net = args.overlay
    tiny, user_img = args.image, args.user_image
    show = "id; pwd; ls -ld /mnt/mesos/sandbox; echo MESOS_SANDBOX=$MESOS_SANDBOX"
    tasks = {
        "running": docker_task(f"{run_id}-running", agent_id, tiny, f"{show}; echo started; exec sleep 600", net),
        "finished": docker_task(f"{run_id}-finished", agent_id, tiny, "echo done; sleep 2; exit 0", net),
        "failed": docker_task(f"{run_id}-failed", agent_id, tiny, "echo failing >&2; sleep 2; exit 3", net),
        "oversized": docker_task(f"{run_id}-oversized", agent_id, tiny, "true", net, cpus=10_000.0),
        "hdfs-uri": docker_task(f"{run_id}-hdfs-uri", agent_id, tiny, "cat job.conf", net, uris=[
            {"value": "hdfs://namenode.invalid:8020/scylla/job.conf", "extract": False, "cache": False}]),
    }
    if args.volume_dir:
        d = Path(args.volume_dir)
        d.mkdir(parents=True, exist_ok=True)
        (d / "job.conf").write_text('name: "fixture"\n')
        os.chmod(d / "job.conf", 0o644)
        tasks["volume-relative"] = docker_task(
            f"{run_id}-volume-relative", agent_id, user_img, f"{show}; cat ./job.conf", net,
            volumes=[{"container_path": "job.conf", "host_path": str(d / "job.conf"), "mode": "RO"}])
        tasks["volume-absolute"] = docker_task(
            f"{run_id}-volume-absolute", agent_id, user_img, f"{show}; cat /etc/scylla-job/job.conf", net,
            volumes=[{"container_path": "/etc/scylla-job/job.conf", "host_path": str(d / "job.conf"),
                      "mode": "RO"}])
    if args.webhdfs:
        path = f"/mr-fixtures/{run_id}/job.conf"
        webhdfs_put(args.webhdfs, path, b'name: "fixture"\n')
        url = f"{args.webhdfs.rstrip('/')}/webhdfs/v1{path}?op=OPEN&user.name=scylla"
        tasks["webhdfs-uri"] = docker_task(
            f"{run_id}-webhdfs-uri", agent_id, user_img, f"{show}; cat ./job.conf", net,
            uris=[{"value": url, "extract": False, "cache": False, "output_file": "job.conf"}])
    return tasks


# -- snapshots ------------------------------------------------------------------
MASTER_GETS = {
    "state": "/master/state", "state-summary": "/master/state-summary", "slaves": "/master/slaves",
    "frameworks": "/master/frameworks", "tasks": "/master/tasks", "roles": "/master/roles",
    "flags": "/master/flags", "health": "/master/health", "version": "/version",
    "metrics-snapshot": "/metrics/snapshot", "redirect": "/master/redirect", "redirect-unprefixed": "/redirect",
    "state-unprefixed": "/state", "tasks-limit-1": "/master/tasks?limit=1&order=asc",
}
AGENT_GETS = {
    "state": "/state", "flags": "/flags", "containers": "/containers", "metrics-snapshot": "/metrics/snapshot",
    "health": "/health", "version": "/version",
}
OPERATOR_CALLS: dict[str, dict[str, Any]] = {
    name: {"type": name} for name in ("GET_HEALTH", "GET_VERSION", "GET_STATE", "GET_AGENTS", "GET_FRAMEWORKS",
                                      "GET_TASKS", "GET_MASTER", "GET_FLAGS")}
# GET_METRICS is refused without its (empty or timeout-only) payload: errors/operator-get-metrics-no-payload.json.
OPERATOR_CALLS["GET_METRICS"] = {"type": "GET_METRICS", "get_metrics": {"timeout": {"nanoseconds": 5_000_000_000}}}


def snapshot(fx: Fixtures, master: str, agent: str, phase: str, sandbox: str | None) -> None:
    for name, path in MASTER_GETS.items():
        fx.write(f"master/{name}.{phase}.json", exchange(master, "GET", path))
    for name, path in AGENT_GETS.items():
        fx.write(f"agent/{name}.{phase}.json", exchange(agent, "GET", path))
    for name, call in OPERATOR_CALLS.items():
        fx.write(f"operator/{name}.{phase}.json",
                 exchange(master, "POST", "/api/v1", call, {"Content-Type": JSON, "Accept": JSON}))
    if sandbox:
        q = sandbox.replace(" ", "%20")
        reads = {"files-browse": f"/files/browse?path={q}",
                 "files-read-stdout": f"/files/read?path={q}/stdout&offset=0&length=4096",
                 "files-read-stderr": f"/files/read?path={q}/stderr&offset=0&length=4096",
                 "files-read-size": f"/files/read?path={q}/stdout&offset=-1",
                 "files-read-size-stderr": f"/files/read?path={q}/stderr&offset=-1",
                 "files-read-outside": "/files/read?path=/etc/passwd&offset=0&length=10",
                 "files-browse-missing": f"/files/browse?path={q}/no-such-dir"}
        for name, path in reads.items():
            fx.write(f"agent/{name}.{phase}.json", exchange(agent, "GET", path))


def record_standby(fx: Fixtures, standby: str) -> None:
    """What a master that does not lead answers (it redirects, or serves only what it knows itself)."""
    gets = {"state": "/master/state", "state-unprefixed": "/state", "redirect": "/master/redirect",
            "health": "/health", "metrics-snapshot": "/metrics/snapshot", "slaves": "/master/slaves",
            "frameworks": "/master/frameworks", "version": "/version"}
    for name, path in gets.items():
        fx.write(f"standby/{name}.json", exchange(standby, "GET", path))
    sub = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "root", "name": "mr-standby",
                                                                "failover_timeout": 0.0}}}
    fx.write("standby/scheduler-SUBSCRIBE.json", stream_head(standby, "/api/v1/scheduler", sub))
    for call in ("GET_HEALTH", "GET_STATE", "GET_MASTER"):
        fx.write(f"standby/operator-{call}.json",
                 exchange(standby, "POST", "/api/v1", {"type": call}, {"Content-Type": JSON, "Accept": JSON}))


def sandbox_of(agent: str, task_id: str) -> str | None:
    state = exchange(agent, "GET", "/state")["response"]["body"]
    for fw in state.get("frameworks", []) + state.get("completed_frameworks", []):
        for ex in fw.get("executors", []) + fw.get("completed_executors", []):
            if ex.get("id") == task_id:
                return ex.get("directory")
    return None


# -- errors ---------------------------------------------------------------------
def record_errors(fx: Fixtures, master: str, sched: Scheduler, agent_id: str, run_id: str) -> None:
    api = "/api/v1/scheduler"
    sub = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "root", "name": "mr-errors"}}}
    bogus = {"value": f"{uuid.uuid4()}-0000"}
    cases: dict[str, tuple[str, str, Any, dict[str, str]]] = {
        "subscribe-no-content-type": ("POST", api, sub, {"Accept": JSON}),
        "subscribe-text-plain": ("POST", api, sub, {"Content-Type": "text/plain", "Accept": JSON}),
        "subscribe-bad-accept": ("POST", api, sub, {"Content-Type": JSON, "Accept": "text/html"}),
        "subscribe-with-stream-id": ("POST", api, sub, {"Content-Type": JSON, "Accept": JSON,
                                                        "Mesos-Stream-Id": sched.stream_id}),
        "subscribe-framework-id-mismatch": ("POST", api, {
            "type": "SUBSCRIBE", "framework_id": bogus,
            "subscribe": {"framework_info": {"user": "root", "name": "mr-errors",
                                             "id": {"value": sched.framework_id}}}},
            {"Content-Type": JSON, "Accept": JSON}),
        "subscribe-bad-json": ("POST", api, b"{not json", {"Content-Type": JSON, "Accept": JSON}),
        "call-unknown-type": ("POST", api, {"type": "NO_SUCH_CALL", "framework_id": {"value": sched.framework_id}},
                              {"Content-Type": JSON, "Mesos-Stream-Id": sched.stream_id}),
        "get-scheduler": ("GET", api, None, {"Accept": JSON}),
        "get-operator": ("GET", "/api/v1", None, {"Accept": JSON}),
        "operator-unknown-call": ("POST", "/api/v1", {"type": "NO_SUCH_CALL"}, {"Content-Type": JSON,
                                                                                 "Accept": JSON}),
        "operator-get-metrics-no-payload": ("POST", "/api/v1", {"type": "GET_METRICS"},
                                            {"Content-Type": JSON, "Accept": JSON}),
        "operator-bad-accept": ("POST", "/api/v1", {"type": "GET_HEALTH"}, {"Content-Type": JSON,
                                                                             "Accept": "text/html"}),
        "unknown-endpoint": ("GET", "/master/no-such-endpoint", None, {}),
    }
    for name, (method, path, body, headers) in cases.items():
        fx.write(f"errors/{name}.json", exchange(master, method, path, body, headers))
    # Mesos takes an unknown id as a framework failing over to a master that lost it: a stream, not an error.
    fx.write("errors/subscribe-unknown-framework-id.json", stream_head(master, api, {
        "type": "SUBSCRIBE", "framework_id": bogus,
        "subscribe": {"framework_info": {"user": "root", "name": "mr-errors", "id": bogus,
                                         "failover_timeout": 0.0}}}))
    # The same frame with the one thing wrong that each name says.
    fx.write("errors/call-wrong-stream-id.json", sched.call("REVIVE", stream_id=str(uuid.uuid4())))
    fx.write("errors/call-no-stream-id.json", sched.call("REVIVE", stream_id=""))
    fx.write("errors/call-unknown-framework.json", sched.call("REVIVE", framework_id=bogus["value"]))
    fx.write("errors/call-non-subscribe-bad-accept.json", exchange(
        master, "POST", api, {"type": "REVIVE", "framework_id": {"value": sched.framework_id}},
        {"Content-Type": JSON, "Accept": "text/html", "Mesos-Stream-Id": sched.stream_id}))
    lost = f"{run_id}-unknown-offer"
    answer = sched.call("ACCEPT", {"offer_ids": [{"value": f"{uuid.uuid4()}-O1"}], "operations": [
        {"type": "LAUNCH", "launch": {"task_infos": [docker_task(lost, agent_id, "scylla-tiny:latest", "true",
                                                                 None)]}}]})
    update = wait_for(lambda: sched.latest(lost), 30, "the update of a task ACCEPTed on an unknown offer")
    fx.write("errors/accept-unknown-offer.json", {**answer, "update": update})


# -- the session ----------------------------------------------------------------
def record(args: argparse.Namespace) -> dict[str, Any]:
    fx = Fixtures(Path(args.out))
    run_id = f"mr-{uuid.uuid4().hex[:6]}"
    operator = EventStream(args.master, "/api/v1", {"type": "SUBSCRIBE"})
    operator.start()
    sched = Scheduler(args.master, "mr-fixtures", ["GPU_RESOURCES"])
    offer = wait_for(lambda: sched.offers(), 60, "an offer from the agent")[0]
    agent_id = offer["agent_id"]["value"]
    tasks = plan_tasks(args, agent_id, run_id)
    accept = sched.call("ACCEPT", {"offer_ids": [offer["id"]], "operations": [
        {"type": "LAUNCH", "launch": {"task_infos": list(tasks.values())}}],
        "filters": {"refuse_seconds": 3600.0}})
    fx.write("scheduler/ACCEPT.json", accept)
    ids = {k: t["task_id"]["value"] for k, t in tasks.items()}

    def settled() -> bool:
        sched.acknowledge_all()
        states = {k: (sched.latest(tid) or {}).get("state") for k, tid in ids.items()}
        return states["running"] == "TASK_RUNNING" and all(
            s in TERMINAL for k, s in states.items() if k != "running")
    wait_for(settled, args.timeout, "the running task RUNNING and every other task ended")
    fx.write("scheduler/ACKNOWLEDGE.json", sched.first_ack or {})
    sandbox = sandbox_of(args.agent, ids["running"])
    snapshot(fx, args.master, args.agent, "running", sandbox)

    fx.write("scheduler/RECONCILE-implicit.json", sched.call("RECONCILE", {"tasks": []}))
    wait_for(lambda: any(s["task_id"]["value"] == ids["running"] and s.get("reason") == "REASON_RECONCILIATION"
                         for s in sched.updates()), 30, "implicit reconciliation of the running task")
    kill = sched.call("KILL", {"task_id": {"value": ids["running"]}, "agent_id": {"value": agent_id}})
    fx.write("scheduler/KILL.json", kill)
    def killed() -> bool:
        sched.acknowledge_all()
        return (sched.latest(ids["running"]) or {}).get("state") in TERMINAL
    wait_for(killed, 60, "the killed task to end")
    explicit = [ids["finished"], f"{run_id}-never-launched"]
    fx.write("scheduler/RECONCILE-explicit.json", sched.call("RECONCILE", {"tasks": [
        {"task_id": {"value": t}, "agent_id": {"value": agent_id}} for t in explicit]}))
    wait_for(lambda: all(any(s["task_id"]["value"] == t and s.get("reason") == "REASON_RECONCILIATION"
                             for s in sched.updates()) for t in explicit), 30, "explicit reconciliation updates")
    record_errors(fx, args.master, sched, agent_id, run_id)
    sched.acknowledge_all()
    snapshot(fx, args.master, args.agent, "after", sandbox)
    fx.write("errors/acknowledge-unknown-uuid.json", sched.call("ACKNOWLEDGE", {
        "agent_id": {"value": agent_id}, "task_id": {"value": ids["failed"]},
        "uuid": base64.b64encode(uuid.uuid4().bytes).decode()}))

    # Offers made to the first framework since its ACCEPT would keep the agent from the second one.
    fx.write("scheduler/SUPPRESS.json", sched.call("SUPPRESS", {}))
    spare = [o["id"] for o in sched.offers() if o["id"] != offer["id"]]
    if spare:
        fx.write("scheduler/DECLINE.json", sched.call("DECLINE", {"offer_ids": spare,
                                                                 "filters": {"refuse_seconds": 3600.0}}))
    multi = Scheduler(args.master, "mr-fixtures-multi-role", ["MULTI_ROLE", "PARTITION_AWARE", "GPU_RESOURCES"],
                      roles=["*"])
    wait_for(lambda: multi.offers(), 60, "an offer to the MULTI_ROLE framework")
    dropped = f"{run_id}-unknown-offer-partition-aware"
    answer = multi.call("ACCEPT", {"offer_ids": [{"value": f"{uuid.uuid4()}-O1"}], "operations": [
        {"type": "LAUNCH", "launch": {"task_infos": [docker_task(dropped, agent_id, args.image, "true", None)]}}]})
    update = wait_for(lambda: multi.latest(dropped), 30, "the update of the partition-aware unknown offer")
    fx.write("errors/accept-unknown-offer-partition-aware.json", {**answer, "update": update})
    fx.write("scheduler/TEARDOWN-multi-role.json", multi.call("TEARDOWN"))
    fx.write("scheduler/SUBSCRIBE-multi-role.json", multi.stream.record())
    multi.stream.close()

    fx.write("scheduler/TEARDOWN.json", sched.call("TEARDOWN"))
    wait_for(lambda: operator.find(lambda e: e["type"] == "FRAMEWORK_REMOVED"), 30, "FRAMEWORK_REMOVED")
    fx.write("scheduler/SUBSCRIBE.json", sched.stream.record())
    sched.stream.close()
    fx.write("operator/SUBSCRIBE.events.json", operator.record())
    operator.close()
    return {"run_id": run_id, "framework_id": sched.framework_id, "agent_id": agent_id,
            "tasks": {k: {"task_id": tid, "final": {f: (sched.outcome(tid) or {}).get(f)
                                                    for f in ("state", "reason", "source", "message")}}
                      for k, tid in ids.items()}}


def make_overlay(name: str) -> None:
    subprocess.run(["docker", "network", "create", "--driver", "overlay", "--attachable",
                    "--label", "mr.fixture=1", name], check=True, capture_output=True)


def remove_overlay(name: str) -> None:
    subprocess.run(["docker", "network", "rm", name], capture_output=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--master", required=True, help="HOST:PORT of the leading mesos-master")
    p.add_argument("--agent", required=True, help="HOST:PORT of its mesos-agent")
    p.add_argument("--out", required=True, help="directory the fixtures go to")
    p.add_argument("--image", default="scylla-tiny:latest", help="image of the plain tasks")
    p.add_argument("--user-image", default="singa:latest", help="image with a non-root user (delivery tasks)")
    p.add_argument("--overlay", help="create this attachable overlay on the agent's engine and put tasks on it")
    p.add_argument("--volume-dir", help="host directory for a job.conf delivered by volume (an allowed root)")
    p.add_argument("--webhdfs", help="WebHDFS URL, http://HOST:9870, for a job.conf fetched over http")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the tasks")
    p.add_argument("--snapshot-only", metavar="PHASE",
                   help="launch nothing: record the GET endpoints and operator calls as they are now, as PHASE")
    p.add_argument("--task", help="with --snapshot-only: a task id whose sandbox /files/* reads are recorded")
    p.add_argument("--standby", metavar="HOST:PORT", help="also record what this non-leading master answers")
    args = p.parse_args()
    if args.standby:
        record_standby(Fixtures(Path(args.out)), args.standby)
    if args.snapshot_only:
        sandbox = sandbox_of(args.agent, args.task) if args.task else None
        snapshot(Fixtures(Path(args.out)), args.master, args.agent, args.snapshot_only, sandbox)
        return 0
    started = time.time()
    if args.overlay:
        make_overlay(args.overlay)
    try:
        outcome = record(args)
    except (RecordError, OSError, http.client.HTTPException) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.overlay:
            remove_overlay(args.overlay)
    version = exchange(args.master, "GET", "/version")["response"]["body"]
    index = {"mesos_version": version, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
             "command": " ".join(["tools/record_apache_mesos.py", *sys.argv[1:]]), **outcome}
    Fixtures(Path(args.out)).write("index.json", index)
    print(json.dumps(outcome["tasks"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
