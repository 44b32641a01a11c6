"""The master's limits against floods: registrations per principal, quick expiry of unused ones, head and
body read deadlines. Each test states the attack and asserts the refusal's reason and its timing."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api import http_answers
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.scheduler_stream import SchedulerStream

INFO = {"user": "nobody", "name": "flood"}


@pytest.fixture
def master(tmp_path, monkeypatch) -> Iterator[Any]:
    """`master(agents=1, credentials=None, **limits)`: an EmbeddedMesos whose MasterConfig gets `limits`."""
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path / "home"))
    made: list[EmbeddedMesos] = []

    def make(agents: int = 1, credentials: dict[str, str] | None = None, **limits: Any) -> EmbeddedMesos:
        m = EmbeddedMesos(agents, simulate=True, allocation_interval=0.2, retry_interval=0.5,
                          heartbeat_interval=1.0, credentials=credentials, work_dir=tmp_path / f"mesos{len(made)}",
                          insecure=credentials is None)   # no credentials: the per-address caps of an insecure master
        for name, value in limits.items():
            assert hasattr(m.master_config, name), name
            setattr(m.master_config, name, value)
        made.append(m)
        return m.start()
    yield make
    for m in made:
        m.stop()


def framework_ids(address: str) -> list[str]:
    return [f["id"] for f in requests.get(f"http://{address}/master/frameworks", timeout=10).json()["frameworks"]]


# ---- registrations ----------------------------------------------------------------------------------

def test_anonymous_registrations_are_capped_per_source_address(master) -> None:
    """The attack: one address registers frameworks by the hundred (the audit made 2,000 in 4 s, all kept).

    Beyond max_frameworks_per_principal live ones, a new registration gets
    429 naming the address and the limit; re-subscribing an existing id is not
    a new registration; tearing one down makes room.
    """
    m = master(max_frameworks_per_principal=3)
    subs = [SchedulerStream(m.master_address, {**INFO, "failover_timeout": 60}) for _ in range(3)]
    assert [s.answer.status_code for s in subs] == [200, 200, 200]
    refused = SchedulerStream(m.master_address, INFO)
    assert refused.answer.status_code == 429
    assert refused.answer.text == ("Too many frameworks: anonymous@127.0.0.1 has 3 registered, the most this "
                                   "master allows (max_frameworks_per_principal=3); tear one down (TEARDOWN) or "
                                   "re-subscribe with its framework id")
    assert len(framework_ids(m.master_address)) == 3
    subs[0].close()
    again = SchedulerStream(m.master_address, {**INFO, "id": {"value": subs[0].framework_id}})
    assert again.answer.status_code == 200 and again.framework_id == subs[0].framework_id
    again.teardown()
    room = SchedulerStream(m.master_address, INFO)
    assert room.answer.status_code == 200
    for s in subs[1:] + [room]:
        s.teardown()


def test_registrations_are_capped_per_principal_not_across_principals(master) -> None:
    """The attack: an authenticated principal floods registrations; another principal must still register."""
    m = master(credentials={"alice": "a-secret", "bob": "b-secret"}, max_frameworks_per_principal=2)
    url = f"http://{m.master_address}/api/v1/scheduler"

    def register(who: str, secret: str) -> requests.Response:
        return requests.post(url, json={"type": "SUBSCRIBE", "subscribe": {"framework_info": {**INFO, "principal": who}}},
                             auth=(who, secret), stream=True, timeout=10)
    alice = [register("alice", "a-secret") for _ in range(3)]
    assert [r.status_code for r in alice] == [200, 200, 429]
    assert "principal 'alice' has 2 registered" in alice[2].text
    bob = register("bob", "b-secret")
    assert bob.status_code == 200
    for r in alice + [bob]:
        r.close()


def test_a_registration_never_used_expires_quickly_whatever_its_failover_timeout(master) -> None:
    """The attack: registrations asking an hour's failover_timeout, then gone, each kept (and persisted) an hour.

    One that never launched a task is removed unused_framework_timeout after
    its stream breaks; one that ran a task keeps its failover timeout.
    """
    m = master(unused_framework_timeout=1.0)
    worker = SchedulerStream(m.master_address, {**INFO, "name": "worker", "failover_timeout": 3600})
    offer = worker.next_of("OFFERS")["offers"]["offers"][0]
    launched = worker.call({"type": "ACCEPT", "framework_id": {"value": worker.framework_id}, "accept": {
        "offer_ids": [offer["id"]], "operations": [{"type": "LAUNCH", "launch": {"task_infos": [{
            "name": "t", "task_id": {"value": "t1"}, "agent_id": offer["agent_id"], "command": {"value": "sleep 60"},
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}}]}]}}]}})
    assert launched.status_code == 202
    assert worker.next_of("UPDATE")["update"]["status"]["state"] in ("TASK_STARTING", "TASK_RUNNING")
    idle = SchedulerStream(m.master_address, {**INFO, "failover_timeout": 3600})
    closed_at = time.monotonic()
    idle.close()
    worker.close()
    wait_until(lambda: idle.framework_id not in framework_ids(m.master_address), 5, "the unused framework removed")
    took = time.monotonic() - closed_at
    assert took < 3.0, f"unused framework kept {took:.1f} s (unused_framework_timeout=1 s)"
    store = m.master_config.work_dir / "master.json"
    wait_until(lambda: idle.framework_id not in store.read_text(), 5, "the unused framework out of the store")
    # the framework with a task is kept for its failover timeout: still there well after 1 s
    time.sleep(2.0)
    assert worker.framework_id in framework_ids(m.master_address)


def test_a_flood_of_registrations_is_refused_then_drains(master) -> None:
    """The attack: 300 anonymous registrations as fast as one client can, each dropped at once.

    At most max_frameworks_per_principal (100, the default) are kept; the
    rest get 429; the kept ones are gone unused_framework_timeout (6 s here)
    later, and the address may register again.
    """
    m = master(unused_framework_timeout=6.0)   # longer than the flood takes (about 1.5 s), so none expire in it
    started = time.monotonic()
    codes = []
    for _ in range(300):
        s = SchedulerStream(m.master_address, {**INFO, "failover_timeout": 3600})
        codes.append(s.answer.status_code)
        s.close()
    elapsed = time.monotonic() - started
    assert elapsed < 6.0, f"the flood took {elapsed:.1f} s, longer than unused_framework_timeout: no verdict"
    assert (codes.count(200), codes.count(429)) == (100, 200), f"in {elapsed:.1f} s"
    wait_until(lambda: not framework_ids(m.master_address), 12, "the flood's registrations expired")
    assert SchedulerStream(m.master_address, INFO).answer.status_code == 200


# ---- head and body read deadlines ----------------------------------------------------------------

def _is_open(sock: socket.socket) -> bool:
    """Whether the server has not closed `sock` (nothing to read and no EOF right now)."""
    sock.setblocking(False)
    try:
        return sock.recv(4096) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def _is_closed(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def _connect(address: str) -> socket.socket:
    host, port = address.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


def test_half_sent_request_heads_are_dropped_after_the_header_read_timeout(master) -> None:
    """The attack: slowloris, many connections each sending half a request head (the audit held 400 for 20 s).

    With header_read_timeout=1 s, every one is closed between 1 s and 3 s
    after it connected; a connection that sends nothing is closed too.
    """
    m = master(header_read_timeout=1.0)
    socks = []
    opened = time.monotonic()
    for i in range(100):
        s = _connect(m.master_address)
        if i % 10:   # one in ten says nothing at all
            s.sendall(b"POST /api/v1/scheduler HTTP/1.1\r\nHost: x\r\nContent-Type: appl")
        socks.append(s)
    time.sleep(max(0.0, opened + 0.6 - time.monotonic()))
    assert all(_is_open(s) for s in socks), "a connection was closed before the header read timeout"
    wait_until(lambda: all(_is_closed(s) for s in socks), 5, "every half-open connection closed")
    closed_after = time.monotonic() - opened
    assert closed_after < 3.0, f"the last half-open connection closed {closed_after:.2f} s after opening"
    for s in socks:
        s.close()


def test_an_idle_keep_alive_connection_is_not_cut_by_the_header_deadline(master) -> None:
    """Not an attack: pymesos reuses one connection for its calls, idle between them; the deadline only
    runs while a head is being sent, so the connection still serves after twice the timeout."""
    m = master(header_read_timeout=1.0)
    s = _connect(m.master_address)
    request = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    s.sendall(request)
    first = s.recv(4096)
    assert first.startswith(b"HTTP/1.1 200"), first
    time.sleep(2.0)
    s.sendall(request)
    second = s.recv(4096)
    assert second.startswith(b"HTTP/1.1 200"), second
    s.close()


def test_a_trickled_call_body_is_refused_with_408(master, monkeypatch) -> None:
    """The attack: a complete head announcing a body that never comes, holding a handler; the body read
    has its own deadline (BODY_READ_TIMEOUT, 1 s here) and answers 408."""
    monkeypatch.setattr(http_answers, "BODY_READ_TIMEOUT", 1.0)
    m = master()
    s = _connect(m.master_address)
    s.sendall(b"POST /api/v1/scheduler HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100\r\n\r\n{\"type\":")
    s.settimeout(5)
    started = time.monotonic()
    answer = s.recv(4096)
    took = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"Request body not received within 1 seconds" in answer
    assert 0.8 < took < 3.0, took
    s.close()
