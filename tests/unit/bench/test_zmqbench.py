"""The network benchmark's message script measures what its plan asks, between two real processes on loopback.

bench/network.py runs this script's text with `python3 -c` in two containers
and trusts its RESULT line; here the same text runs as two local processes,
the client started first (as on the overlay, where it may come up before the
server), so a protocol slip shows here rather than as a hung benchmark.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from bench import network

PLAN = {"warmup": 3, "rtts": 20, "repeats": 2, "bulk": [[64, 500], [4096, 50]], "connect_timeout": 30}


def _two_free_ports() -> int:
    """A port p on loopback with p + 1 free too (the server binds both)."""
    for _ in range(50):
        with socket.socket() as first:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            with socket.socket() as second:
                try:
                    second.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
        return port
    raise AssertionError("no two adjacent free ports on loopback")


def test_client_and_server_exchange_the_planned_round_trips_and_bulk_messages() -> None:
    port = _two_free_ports()
    client = subprocess.Popen([sys.executable, "-c", network.SCRIPT, "client", "127.0.0.1", str(port),
                               json.dumps(PLAN)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    server = subprocess.Popen([sys.executable, "-c", network.SCRIPT, "server", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = client.communicate(timeout=60)
        assert client.returncode == 0, err
        assert server.wait(timeout=30) == 0, server.stderr.read() if server.stderr else ""
    finally:
        for proc in (client, server):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    results = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(results) == 1, out
    result = json.loads(results[0].removeprefix("RESULT "))
    assert len(result["rtt_us"]) == PLAN["rtts"] and all(rtt > 0 for rtt in result["rtt_us"])
    expected = [(size, count) for size, count in PLAN["bulk"] for _ in range(PLAN["repeats"])]
    assert [(r["size"], r["count"]) for r in result["throughput"]] == expected
    for r in result["throughput"]:
        assert r["msgs_per_s"] == r["count"] / r["seconds"]
        assert abs(r["mb_per_s"] - r["count"] * r["size"] / r["seconds"] / 1e6) < 1e-9 * r["mb_per_s"] + 1e-12


def test_a_client_whose_server_never_comes_gives_up_with_a_message() -> None:
    port = _two_free_ports()
    client = subprocess.run([sys.executable, "-c", network.SCRIPT, "client", "127.0.0.1", str(port),
                             json.dumps({**PLAN, "connect_timeout": 2})],
                            capture_output=True, text=True, timeout=60)
    assert client.returncode != 0
    assert "server never answered" in client.stderr
