"""Reading a task's stdout through an agent's Mesos file endpoints (a fake agent on a local port)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from scylla_singa.ui import agent_files
from scylla_singa.ui.agent_files import LogError, agent_url_from_state, parse_request, read_task_file, sandbox_of

AGENT_STATE = {
    "frameworks": [{"executors": [{"id": "live", "directory": "/sb/live", "tasks": [{"id": "live"}]}]}],
    "completed_frameworks": [{"completed_executors": [{"id": "exec-x", "directory": "/sb/done",
                                                       "completed_tasks": [{"id": "done"}]}]}],
}


@pytest.mark.parametrize("task, want", [("live", "/sb/live"), ("done", "/sb/done"), ("other", None)])
def test_sandbox_is_found_among_live_and_completed_executors(task, want) -> None:
    assert sandbox_of(AGENT_STATE, task) == want


def test_agent_url_comes_from_the_master_state_pid() -> None:
    state = {"slaves": [{"id": "S1", "pid": "slave(1)@10.1.2.3:5051"}, {"id": "S2", "pid": "slave(1)@10.1.2.4:0"}]}
    assert agent_url_from_state(state, "S1") == "http://10.1.2.3:5051"
    assert agent_url_from_state(state, "S2") is None and agent_url_from_state(state, "S9") is None


@pytest.mark.parametrize("query, status", [
    ({"task": "t"}, 400), ({"agent": "a", "task": "t", "file": "../etc/passwd"}, 400),
    ({"agent": "a", "task": "t", "offset": "x"}, 400),
], ids=["no-agent", "not-a-log-file", "bad-offset"])
def test_bad_log_requests_are_refused(query, status) -> None:
    with pytest.raises(LogError) as err:
        parse_request(query)
    assert err.value.status == status


def test_a_good_request_defaults_to_the_tail_of_stdout() -> None:
    assert parse_request({"agent": "a", "task": "t"}) == ("a", "t", "stdout", -1)


def fake_agent(sandbox: Path) -> web.Application:
    """An agent with one task `t1` whose sandbox is `sandbox`, answering like scylla's (and Mesos's) agent."""
    async def state(request: web.Request) -> web.Response:
        return web.json_response({"frameworks": [{"executors": [{"id": "t1", "directory": str(sandbox),
                                                                 "tasks": [{"id": "t1"}]}]}]})

    async def read(request: web.Request) -> web.Response:
        path = Path(request.query["path"])
        if path.parent != sandbox or not path.exists():
            return web.Response(status=404)
        data = path.read_bytes()
        offset = int(request.query["offset"])
        if offset == -1:
            return web.json_response({"data": "", "offset": len(data)})
        length = int(request.query.get("length", len(data)))
        return web.json_response({"data": data[offset:offset + length].decode(), "offset": offset})
    app = web.Application()
    app.add_routes([web.get("/state", state), web.get("/files/read", read)])
    return app


async def _read(sandbox: Path, task: str, offset: int, chunk: int | None = None) -> dict:
    server = TestServer(fake_agent(sandbox))
    await server.start_server()
    try:
        async with aiohttp.ClientSession() as http:
            return await read_task_file(http, str(server.make_url("")).rstrip("/"), task, "stdout", offset)
    finally:
        await server.close()


def test_reading_from_an_offset_and_following_on(tmp_path: Path) -> None:
    text = "PROGRESS {\"step\": 10}\nline two\n"
    (tmp_path / "stdout").write_text(text)
    first = asyncio.run(_read(tmp_path, "t1", 0))
    assert first["data"] == text and first["next"] == first["size"] == len(text)
    assert first["path"] == f"{tmp_path}/stdout"
    with (tmp_path / "stdout").open("a") as f:
        f.write("more\n")
    again = asyncio.run(_read(tmp_path, "t1", first["next"]))
    assert again["data"] == "more\n" and again["next"] == len(text) + 5


def test_the_tail_is_read_when_no_offset_is_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(agent_files, "CHUNK", 8)
    (tmp_path / "stdout").write_text("0123456789abcdef")
    tail = asyncio.run(_read(tmp_path, "t1", -1))
    assert (tail["data"], tail["offset"], tail["next"]) == ("89abcdef", 8, 16)


def test_an_unknown_task_is_a_404(tmp_path: Path) -> None:
    with pytest.raises(LogError) as err:
        asyncio.run(_read(tmp_path, "nope", 0))
    assert err.value.status == 404


def test_an_unreachable_agent_is_a_502() -> None:
    async def go() -> None:
        async with aiohttp.ClientSession() as http:
            await read_task_file(http, "http://127.0.0.1:9", "t1", "stdout", 0)
    with pytest.raises(LogError) as err:
        asyncio.run(go())
    assert err.value.status == 502
