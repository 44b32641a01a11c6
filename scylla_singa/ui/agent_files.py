"""Reading a task's stdout/stderr through its agent's Mesos file endpoints, for the log viewer.

Only endpoints Apache Mesos agents serve too: `/state` (to find the task's
sandbox `directory`) and `/files/read` (`{"data", "offset"}`). The browser
talks to the master or the framework (same origin), which calls the agent:

    GET /ui/api/log?agent=ID&task=ID&file=stdout&offset=N
        -> {"data", "offset", "next", "size", "path"}     (offset -1: the last 64 KiB)

Errors are LogError with the HTTP status the page should see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import aiohttp

FILES = ("stdout", "stderr")
CHUNK = 64 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=10)


class LogError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def sandbox_of(agent_state: Mapping[str, Any], task_id: str) -> str | None:
    """The sandbox directory of `task_id` in an agent's /state, live or completed; None if unknown."""
    for fw in list(agent_state.get("frameworks", [])) + list(agent_state.get("completed_frameworks", [])):
        for ex in list(fw.get("executors", [])) + list(fw.get("completed_executors", [])):
            tasks = ex.get("tasks", []) + ex.get("completed_tasks", []) + ex.get("queued_tasks", [])
            if ex.get("id") == task_id or any(t.get("id") == task_id for t in tasks):
                return ex.get("directory") or None
    return None


def agent_url_from_state(master_state: Mapping[str, Any], agent_id: str) -> str | None:
    """http://ip:port of an agent from the master's /master/state (its `pid`), None if unknown or fileless."""
    for s in master_state.get("slaves", []):
        if s.get("id") == agent_id:
            m = re.search(r"@([^:]+):(\d+)$", s.get("pid", ""))
            return f"http://{m.group(1)}:{m.group(2)}" if m and m.group(2) != "0" else None
    return None


def parse_request(query: Mapping[str, str]) -> tuple[str, str, str, int]:
    """(agent id, task id, file, offset) from the query; LogError(400) when something is off."""
    agent, task, name = query.get("agent", ""), query.get("task", ""), query.get("file", "stdout")
    if not agent or not task:
        raise LogError(400, "give agent=ID and task=ID")
    if name not in FILES:
        raise LogError(400, f"file must be one of {', '.join(FILES)}")
    try:
        offset = int(query.get("offset", "-1"))
    except ValueError:
        raise LogError(400, "offset must be an integer") from None
    return agent, task, name, max(-1, offset)


async def _get_json(http: aiohttp.ClientSession, url: str, **params: Any) -> Any:
    try:
        async with http.get(url, params=params, timeout=TIMEOUT) as resp:
            if resp.status == 404:
                raise LogError(404, f"{url}: not found (the sandbox may have been garbage-collected)")
            if resp.status != 200:
                raise LogError(502, f"{url} answered {resp.status}: {(await resp.text())[:200]}")
            return await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise LogError(502, f"cannot reach {url}: {exc.__class__.__name__}") from None


async def read_task_file(http: aiohttp.ClientSession, agent_url: str, task_id: str, name: str,
                         offset: int) -> dict[str, Any]:
    """Up to CHUNK bytes of a task's sandbox file from `offset` (-1: the tail); LogError on failure."""
    directory = sandbox_of(await _get_json(http, f"{agent_url}/state"), task_id)
    if directory is None:
        raise LogError(404, f"the agent has no sandbox for task {task_id}")
    path = f"{directory}/{name}"
    size = int((await _get_json(http, f"{agent_url}/files/read", path=path, offset=-1))["offset"])
    start = max(0, size - CHUNK) if offset < 0 else min(offset, size)
    got = await _get_json(http, f"{agent_url}/files/read", path=path, offset=start, length=CHUNK)
    data = got.get("data", "")
    start = int(got.get("offset", start))
    return {"data": data, "offset": start, "next": start + len(data.encode("utf-8")), "size": size, "path": path}
