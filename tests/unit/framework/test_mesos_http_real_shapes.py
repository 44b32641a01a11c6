"""The framework's HTTP reads (`MesosHttp`) against answers recorded from a real Apache Mesos 1.12.

The bodies are served as recorded (tests/fixtures/apache_mesos/, made by
tools/record_apache_mesos.py) by a local HTTP server; only the agent's
address inside the master's `/master/state` is pointed at that server, so the
framework follows it as it would on a cluster. A read that depends on a
field or shape only our own master or agent writes fails here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from scylla_singa.framework.mesos_http import MesosHttp

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "apache_mesos"


def recorded(rel: str) -> dict[str, Any]:
    return json.loads((FIXTURES / rel).read_text())


INDEX = recorded("index.json")
RUNNING_TASK = INDEX["tasks"]["running"]["task_id"]
AGENT_ID = INDEX["agent_id"]


class Recorded(BaseHTTPRequestHandler):
    """Answers GETs with recorded bodies; `routes` maps (path, offset) to a fixture file."""

    routes: dict[tuple[str, str | None], dict[str, Any]] = {}

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        offset = parse_qs(url.query).get("offset", [None])[0]
        answer = self.routes.get((url.path, offset)) or self.routes.get((url.path, None))
        if answer is None:
            self.send_error(404)
            return
        data = json.dumps(answer["body"]).encode()
        self.send_response(answer["status"])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def mesos() -> Iterator[MesosHttp]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    here = f"127.0.0.1:{server.server_address[1]}"
    state = recorded("master/state.running.json")["response"]
    for agent in state["body"]["slaves"]:
        agent["pid"] = f"slave(1)@{here}"
    Recorded.routes = {
        ("/master/state", None): state,
        ("/state", None): recorded("agent/state.running.json")["response"],
        ("/files/read", "-1"): recorded("agent/files-read-size.running.json")["response"],
        ("/files/read", "0"): recorded("agent/files-read-stdout.running.json")["response"],
    }
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield MesosHttp(here)
    finally:
        server.shutdown()
        server.server_close()


def test_cluster_size_comes_from_a_real_master_state(mesos: MesosHttp) -> None:
    (agent,) = mesos.cluster_agents()
    flags = recorded("agent/flags.running.json")["response"]["body"]["flags"]
    offered = dict(part.split(":") for part in flags["resources"].split(";"))
    assert agent.agent_id == AGENT_ID
    assert (agent.free.cpus, agent.free.mem_mb) == (float(offered["cpus"]), float(offered["mem"]))


def test_a_task_sandbox_is_found_in_a_real_agent_state(mesos: MesosHttp) -> None:
    url = mesos.agent_url(AGENT_ID)
    directory = mesos.sandbox(url, RUNNING_TASK)
    assert directory is not None and RUNNING_TASK in directory and directory.startswith("/")


def test_a_task_stdout_is_read_through_real_files_read_answers(mesos: MesosHttp) -> None:
    stdout = recorded("agent/files-read-stdout.running.json")["response"]["body"]["data"]
    assert "started" in stdout  # what the recorded task printed
    assert mesos.tail(AGENT_ID, RUNNING_TASK, "stdout") == stdout
