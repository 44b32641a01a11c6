"""The master's quick lane for scheduler calls answers byte for byte as aiohttp does, and is taken.

Each case sends the same requests on two raw connections to one master: one
in the quick lane (mesos/api/quick_lane.py), one handed to aiohttp first by
a GET. The answers must match in status line, headers (but Date) and body.
"""

from __future__ import annotations

import base64
import json
import socket
import time
from collections.abc import Iterator
import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.mesos_framework import TestFramework, task_info
from tests.support.scheduler_stream import SchedulerStream

PATH = "/api/v1/scheduler"


@pytest.fixture(scope="module")
def mesos(tmp_path_factory) -> Iterator[EmbeddedMesos]:
    m = EmbeddedMesos(1, simulate=True, allocation_interval=0.2, insecure=True,
                      work_dir=tmp_path_factory.mktemp("lane"))
    m.start()
    yield m
    m.stop()


@pytest.fixture
def framework(mesos) -> Iterator[SchedulerStream]:
    stream = SchedulerStream(mesos.master_address, {"user": "nobody", "name": "lane", "failover_timeout": 60})
    assert stream.answer.status_code == 200
    yield stream
    stream.teardown()


def request(body: bytes | str, *, stream_id: str | None = None, content_type: str = "application/json",
            path: str = PATH, extra: str = "") -> bytes:
    data = body.encode() if isinstance(body, str) else body
    head = f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: {content_type}\r\n"
    if stream_id is not None:
        head += f"Mesos-Stream-Id: {stream_id}\r\n"
    return (head + extra + f"Content-Length: {len(data)}\r\n\r\n").encode() + data


def read_answers(sock: socket.socket, count: int, deadline_s: float = 10.0
                 ) -> list[tuple[bytes, list[tuple[str, str]], bytes]]:
    """`count` HTTP answers (status line, headers in order without Date's value, body), framed by Content-Length."""
    sock.settimeout(deadline_s)
    buf = b""
    answers = []
    while len(answers) < count:
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            assert chunk, f"connection closed after {len(answers)} of {count} answers"
            buf += chunk
        head, _, buf = buf.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = [tuple(line.split(": ", 1)) for line in lines[1:]]
        length = int(dict(headers)["Content-Length"])
        while len(buf) < length:
            chunk = sock.recv(65536)
            assert chunk, "connection closed inside a body"
            buf += chunk
        body, buf = buf[:length], buf[length:]
        assert "Date" in dict(headers)
        answers.append((lines[0].encode(), [(k, "-" if k == "Date" else v) for k, v in headers], body))
    return answers


def via_aiohttp(address: str) -> socket.socket:
    """A connection aiohttp serves: a GET (which the lane never takes) hands it over first."""
    sock = in_lane(address)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
    assert read_answers(sock, 1)[0][0] == b"HTTP/1.1 200 OK"
    return sock


def in_lane(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)))


def quick_answers(mesos: EmbeddedMesos) -> int:
    assert mesos.server is not None and mesos.server.http is not None
    return mesos.server.http.scheduler.quick_answers


def cases(fw: SchedulerStream) -> dict[str, bytes]:
    """Calls whose answers must not depend on the lane: accepted ones and each kind of refusal."""
    fid = {"value": fw.framework_id}
    ack = {"agent_id": {"value": "no-such-agent"}, "task_id": {"value": "t"}, "uuid": "AAAAAAAAAAAAAAAAAAAAAA=="}
    return {
        "revive (202)": request(json.dumps({"type": "REVIVE", "framework_id": fid}), stream_id=fw.stream_id),
        "decline an unknown offer (202)": request(json.dumps(
            {"type": "DECLINE", "framework_id": fid, "decline": {"offer_ids": [{"value": "o-none"}]}}),
            stream_id=fw.stream_id),
        "acknowledge, /master path (202)": request(json.dumps(
            {"type": "ACKNOWLEDGE", "framework_id": fid, "acknowledge": ack}), stream_id=fw.stream_id,
            path="/master" + PATH),
        "unknown framework (400)": request(json.dumps(
            {"type": "REVIVE", "framework_id": {"value": "nope"}}), stream_id=fw.stream_id),
        "wrong stream id (400)": request(json.dumps({"type": "REVIVE", "framework_id": fid}), stream_id="other"),
        "no stream id (400)": request(json.dumps({"type": "REVIVE", "framework_id": fid})),
        "not JSON (400)": request("{nope", stream_id=fw.stream_id),
        "no type (400)": request("{}", stream_id=fw.stream_id),
        "wrong content type (415)": request("{}", content_type="text/plain"),
        "UNKNOWN call (501)": request(json.dumps({"type": "UNKNOWN", "framework_id": fid}), stream_id=fw.stream_id),
        "UPDATE_FRAMEWORK without info (400)": request(json.dumps(
            {"type": "UPDATE_FRAMEWORK", "framework_id": fid}), stream_id=fw.stream_id),
        "SUBSCRIBE with a stream id (400)": request(json.dumps(
            {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "x", "name": "y"}}}), stream_id="s"),
        "chunked body (400 or 202 by aiohttp)": (
            f"POST {PATH} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nMesos-Stream-Id: {fw.stream_id}\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n").encode()
        + b"%x\r\n%s\r\n0\r\n\r\n" % (len(json.dumps({"type": "REVIVE", "framework_id": fid})),
                                        json.dumps({"type": "REVIVE", "framework_id": fid}).encode()),
    }


def test_each_answer_in_the_lane_is_aiohttps_answer(mesos, framework) -> None:
    lane, full = in_lane(mesos.master_address), via_aiohttp(mesos.master_address)
    try:
        for name, raw in cases(framework).items():
            lane.sendall(raw)
            full.sendall(raw)
            quick, slow = read_answers(lane, 1)[0], read_answers(full, 1)[0]
            assert quick == slow, name
            if name.endswith("(202)"):
                assert quick[0] == b"HTTP/1.1 202 Accepted", (name, quick)
    finally:
        lane.close()
        full.close()


def test_pipelined_calls_are_answered_in_order_across_the_hand_over(mesos, framework) -> None:
    """Calls the lane takes, a request it does not (a GET), then calls again: every answer, in order."""
    fid = {"value": framework.framework_id}
    revive = request(json.dumps({"type": "REVIVE", "framework_id": fid}), stream_id=framework.stream_id)
    unknown = request(json.dumps({"type": "REVIVE", "framework_id": {"value": "nope"}}), stream_id=framework.stream_id)
    before = quick_answers(mesos)
    sock = in_lane(mesos.master_address)
    try:
        sock.sendall(revive + unknown + revive + b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n" + revive + unknown)
        statuses = [a[0] for a in read_answers(sock, 6)]
    finally:
        sock.close()
    assert statuses == [b"HTTP/1.1 202 Accepted", b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 202 Accepted",
                        b"HTTP/1.1 200 OK", b"HTTP/1.1 202 Accepted", b"HTTP/1.1 400 Bad Request"]
    assert quick_answers(mesos) - before == 3   # the three before the GET; aiohttp took the rest


def test_a_call_split_over_packets_is_answered_in_the_lane(mesos, framework) -> None:
    raw = request(json.dumps({"type": "REVIVE", "framework_id": {"value": framework.framework_id}}),
                  stream_id=framework.stream_id)
    before = quick_answers(mesos)
    sock = in_lane(mesos.master_address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        for i in range(0, len(raw), 7):
            sock.sendall(raw[i:i + 7])
            time.sleep(0.002)
        assert read_answers(sock, 1)[0][0] == b"HTTP/1.1 202 Accepted"
    finally:
        sock.close()
    assert quick_answers(mesos) - before == 1


def test_a_trickled_body_goes_to_aiohttp_and_is_still_answered(mesos, framework) -> None:
    """The lane waits LANE_BODY_PATIENCE_S for a body's rest, then aiohttp reads it (under its deadline)."""
    raw = request(json.dumps({"type": "REVIVE", "framework_id": {"value": framework.framework_id}}),
                  stream_id=framework.stream_id)
    before = quick_answers(mesos)
    sock = in_lane(mesos.master_address)
    try:
        sock.sendall(raw[:-5])
        time.sleep(1.0)
        sock.sendall(raw[-5:])
        assert read_answers(sock, 1)[0][0] == b"HTTP/1.1 202 Accepted"
    finally:
        sock.close()
    assert quick_answers(mesos) == before


def test_stopping_the_master_closes_connections_still_in_the_lane(tmp_path) -> None:
    m = EmbeddedMesos(1, simulate=True, insecure=True, work_dir=tmp_path / "m").start()
    try:
        sock = in_lane(m.master_address)
        sock.sendall(request(json.dumps({"type": "REVIVE", "framework_id": {"value": "nope"}})))
        assert read_answers(sock, 1)[0][0] == b"HTTP/1.1 400 Bad Request"
        assert quick_answers(m) == 1   # still in the lane
    finally:
        m.stop()
    sock.settimeout(10)
    assert sock.recv(1) == b""   # closed by the master, not left open
    sock.close()


def test_a_secure_master_leaves_calls_without_credentials_to_aiohttp(tmp_path) -> None:
    m = EmbeddedMesos(1, simulate=True, work_dir=tmp_path / "m").start()
    try:
        sock = in_lane(m.master_address)
        sock.sendall(request(json.dumps({"type": "REVIVE", "framework_id": {"value": "f"}})))
        status, headers, _ = read_answers(sock, 1)[0]
        sock.close()
        assert status == b"HTTP/1.1 401 Unauthorized" and "WWW-Authenticate" in dict(headers)
        assert quick_answers(m) == 0
        auth = m.http_auth
        assert auth is not None
        stream = SchedulerStream(m.master_address, {"user": "nobody", "name": "lane"}, auth=auth)
        wait_until(lambda: stream.framework_id is not None, 10, "subscribed")
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        sock = in_lane(m.master_address)
        sock.sendall(request(json.dumps({"type": "REVIVE", "framework_id": {"value": stream.framework_id}}),
                             stream_id=stream.stream_id, extra=f"Authorization: Basic {token}\r\n"))
        assert read_answers(sock, 1)[0][0] == b"HTTP/1.1 202 Accepted"
        sock.close()
        assert quick_answers(m) == 1
        stream.teardown()
    finally:
        m.stop()


def test_pymesos_runs_a_task_with_its_calls_in_the_lane(mesos) -> None:
    """A real client's task: its ACCEPT and each ACKNOWLEDGE are answered in the lane, and the task ends."""
    before = quick_answers(mesos)
    with TestFramework(mesos.master_address, "lane-pymesos") as fw:
        offer = fw.take_offer(cpus=0.1, mem=32)
        task = task_info(offer["agent_id"], command="sleep 0.2")   # a simulated agent ends it on time
        fw.launch(offer, [task])
        fw.wait_state(task["task_id"]["value"], "TASK_FINISHED")
        wait_until(lambda: quick_answers(mesos) - before >= 4, 10, "ACCEPT and three ACKNOWLEDGEs in the lane")
