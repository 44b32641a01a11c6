"""Every HTTP read of the framework against answers recorded from a real Apache Mesos 1.12.

The exchanges (tests/fixtures/apache_mesos/, made by
tools/record_apache_mesos.py) are served as recorded by a local HTTP
server, which answers a request only with an exchange whose path and query
match it (but `length`); only the agent's address inside the master's
`/master/state` is pointed at that server, so the framework follows it as it
would on a cluster. The reads: the cluster's size for the never-fits check,
an agent's address, a task's sandbox (running or completed), `/files/read`
(size, data, a path outside the sandboxes), what the `logs` command prints, the
tail failure reports print, the job's result (FINAL or the failed process's last
lines), and the job view's log viewer. A read that depends on a field or a
shape only our own master or agent writes fails here.

One kind of answer is derived rather than replayed: a `/files/read` of a
recorded sandbox file at an offset the recording did not ask for (the size
of stderr, `offset=-1`; a read past the data, as `logs` does to find the
end) is cut from that file's recorded whole read in the recorded shape,
`{"data", "offset"}`, by the rule Mesos follows; a test checks the rule
against the size answer that was recorded (stdout's). The master's
`/health` probe is not recorded here: tests/cluster runs the framework
against real masters.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlparse

import aiohttp
import pytest
from click.testing import CliRunner

from scylla_singa.cli import run_commands
from scylla_singa.framework.mesos_http import MesosHttp, MesosHttpError
from scylla_singa.framework.model import Job, JobState, TaskRecord
from scylla_singa.framework.results import collect_result
from scylla_singa.framework.store import JobStore
from scylla_singa.ui.agent_files import agent_url_from_state, read_task_file
from tests.support.recorded_mesos import FIXTURES, recorded
from .builders import spec

INDEX = recorded("index.json")
RUNNING_TASK = INDEX["tasks"]["running"]["task_id"]   # a task that ran, then was killed (state.after.json)
AGENT_ID = INDEX["agent_id"]


def _key(path_and_query: str) -> tuple[str, frozenset[tuple[str, str]]]:
    url = urlparse(path_and_query)
    return url.path, frozenset((k, v) for k, v in parse_qsl(url.query) if k != "length")


class Recorded(BaseHTTPRequestHandler):
    """Answers GETs with the recorded exchange whose request matches (path and query but `length`)."""

    exchanges: dict[tuple[str, frozenset[tuple[str, str]]], dict[str, Any]] = {}
    whole_files: dict[str, str] = {}   # sandbox path -> its whole recorded data (see the module docstring)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        answer = self.exchanges.get(_key(self.path)) or _derived_read(self.path, self.whole_files)
        if answer is None:
            self.send_error(599, "not recorded")  # a read the recordings do not cover: the test must fail
            return
        body = answer["body"]
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(answer["status"])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def _serve(phase: str) -> Iterator[str]:
    """Serve the master's and agent's recorded answers of `phase` ("running" or "after") on a free port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    here = f"127.0.0.1:{server.server_address[1]}"
    exchanges = {}
    for path in sorted((FIXTURES / "master").glob(f"*.{phase}.json")) + sorted((FIXTURES / "agent").glob(f"*.{phase}.json")):
        ex = recorded(str(path.relative_to(FIXTURES)))
        exchanges[_key(ex["request"]["path"])] = ex["response"]
    # The agent's /state, /health, /version and /metrics/snapshot replace the master's unprefixed ones:
    # the framework reads those paths only from the agent.
    state = exchanges[_key("/master/state")]
    for agent in state["body"]["slaves"]:
        agent["pid"] = f"slave(1)@{here}"
    Recorded.exchanges = exchanges
    Recorded.whole_files = whole_files(phase)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield here
    finally:
        server.shutdown()
        server.server_close()


def whole_files(phase: str) -> dict[str, str]:
    """Sandbox path -> data of each recorded `/files/read` from offset 0 that returned less than it asked
    for (so the whole file)."""
    out = {}
    for path in sorted((FIXTURES / "agent").glob(f"files-read-*.{phase}.json")):
        ex = recorded(str(path.relative_to(FIXTURES)))
        query = dict(parse_qsl(urlparse(ex["request"]["path"]).query))
        body = ex["response"]["body"]
        if ex["response"]["status"] == 200 and query.get("offset") == "0" and \
                len(body["data"].encode()) < int(query["length"]):
            out[query["path"]] = body["data"]
    return out


def _derived_read(path_and_query: str, files: dict[str, str]) -> dict[str, Any] | None:
    """A `/files/read` answer cut from a recorded whole file: offset -1 gives the size, else the bytes
    from offset (at most `length`); None for anything else."""
    url = urlparse(path_and_query)
    query = dict(parse_qsl(url.query))
    if url.path != "/files/read" or query.get("path") not in files:
        return None
    whole = files[query["path"]].encode()
    offset = int(query.get("offset", "0"))
    if offset == -1:
        return {"status": 200, "body": {"data": "", "offset": len(whole)}}
    end = offset + int(query["length"]) if "length" in query else len(whole)
    return {"status": 200, "body": {"data": whole[offset:end].decode(), "offset": offset}}


def test_the_derived_size_answer_is_the_recorded_one() -> None:
    recorded_size = recorded("agent/files-read-size.running.json")
    derived = _derived_read(recorded_size["request"]["path"], whole_files("running"))
    assert derived is not None and derived["body"] == recorded_size["response"]["body"]
    assert _key(recorded_size["request"]["path"])[0] == "/files/read"


@pytest.fixture()
def mesos() -> Iterator[MesosHttp]:
    """The framework's reads against the answers recorded while the task ran."""
    for here in _serve("running"):
        yield MesosHttp(here)


@pytest.fixture()
def mesos_after() -> Iterator[MesosHttp]:
    """... and against those recorded after every task had ended."""
    for here in _serve("after"):
        yield MesosHttp(here)


def test_cluster_size_comes_from_a_real_master_state(mesos: MesosHttp) -> None:
    (agent,) = mesos.cluster_agents()
    flags = recorded("agent/flags.running.json")["response"]["body"]["flags"]
    offered = dict(part.split(":", 1) for part in flags["resources"].split(";"))
    assert agent.agent_id == AGENT_ID and agent.hostname == "127.0.0.1"
    assert (agent.free.cpus, agent.free.mem_mb) == (float(offered["cpus"]), float(offered["mem"]))


def test_an_agent_address_comes_from_its_pid(mesos: MesosHttp) -> None:
    assert mesos.agent_url(AGENT_ID) == f"http://{mesos.master}"
    with pytest.raises(MesosHttpError, match="does not know agent"):
        mesos.agent_url("no-such-agent")


def test_a_task_sandbox_is_found_in_a_real_agent_state(mesos: MesosHttp) -> None:
    directory = mesos.sandbox(mesos.agent_url(AGENT_ID), RUNNING_TASK)
    assert directory is not None and RUNNING_TASK in directory and directory.startswith("/")


def test_a_completed_task_sandbox_is_found_too(mesos_after: MesosHttp) -> None:
    url = mesos_after.agent_url(AGENT_ID)
    for name, task in INDEX["tasks"].items():
        if name != "oversized":  # refused by the master: it never reached the agent
            directory = mesos_after.sandbox(url, task["task_id"])
            assert directory is not None and task["task_id"] in directory, name


def test_files_read_gives_the_size_and_the_data(mesos: MesosHttp) -> None:
    url = mesos.agent_url(AGENT_ID)
    path = f"{mesos.sandbox(url, RUNNING_TASK)}/stdout"
    data, size = mesos.read(url, path, -1, 0)
    assert data == "" and size == 152
    data, at = mesos.read(url, path, 0, 4096)
    assert at == 0 and len(data.encode()) == size


def test_a_path_outside_the_sandboxes_is_an_error_not_a_crash(mesos: MesosHttp) -> None:
    with pytest.raises(MesosHttpError, match="404"):
        mesos.read(mesos.agent_url(AGENT_ID), "/etc/passwd", 0, 10)


@pytest.mark.parametrize("name, expected", [("stdout", "uid=65534"), ("stderr", "Executor registered")])
def test_a_task_tail_is_read_through_real_files_read_answers(mesos: MesosHttp, name: str, expected: str) -> None:
    whole = recorded(f"agent/files-read-{name}.running.json")["response"]["body"]["data"]
    tail = mesos.tail(AGENT_ID, RUNNING_TASK, name)
    assert expected in tail and tail == whole[-len(tail):]


def _job_of_the_recorded_task(state: JobState) -> Job:
    job = Job(spec(), plan=None, state=state)  # type: ignore[arg-type] - the result needs no plan
    job.tasks = {RUNNING_TASK: TaskRecord(RUNNING_TASK, 0, 1, AGENT_ID, "127.0.0.1", state="TASK_FAILED")}
    job.failed_task = RUNNING_TASK
    return job


def test_a_failed_jobs_report_carries_the_last_lines_of_both_streams(mesos: MesosHttp) -> None:
    result = collect_result(mesos, _job_of_the_recorded_task(JobState.FAILED))
    assert "result_error" not in result, result
    lines = result["last_lines"]
    assert any(line.startswith("[stderr] ") and "Executor registered" in line for line in lines)
    assert any(line.startswith("[stdout] uid=65534") for line in lines)


def test_a_finished_jobs_result_reads_process_0s_stdout(mesos: MesosHttp) -> None:
    result = collect_result(mesos, _job_of_the_recorded_task(JobState.FINISHED))
    assert result == {}  # read without error; the recorded task printed no FINAL line


def test_the_job_views_log_viewer_reads_a_real_sandbox(mesos: MesosHttp) -> None:
    async def read() -> dict[str, Any]:
        state = mesos.master_state()
        url = agent_url_from_state(state, AGENT_ID)
        assert url == f"http://{mesos.master}"
        async with aiohttp.ClientSession() as http:
            return await read_task_file(http, url, RUNNING_TASK, "stdout", -1)
    chunk = asyncio.run(read())
    whole = recorded("agent/files-read-stdout.running.json")["response"]["body"]["data"]
    assert (chunk["data"], chunk["offset"], chunk["size"]) == (whole, 0, 152)
    assert chunk["next"] == 152 and chunk["path"].endswith(f"{RUNNING_TASK}/runs/{Path(chunk['path']).parts[-2]}/stdout")


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_the_logs_command_prints_a_real_sandbox_file(mesos: MesosHttp, tmp_path: Path, monkeypatch,
                                                     stream: str) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    store = JobStore(tmp_path / "framework.sqlite")
    store.save(_job_of_the_recorded_task(JobState.FAILED), "fw-1")
    store.set_meta("master:fw-1", mesos.master)
    result = CliRunner().invoke(run_commands.logs, ["j1", "--proc", "0", f"--{stream}"])
    whole = recorded(f"agent/files-read-{stream}.running.json")["response"]["body"]["data"]
    assert result.exit_code == 0, result.output
    assert result.output == whole
