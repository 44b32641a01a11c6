"""The agent's HTTP endpoints (docs/contracts.md): /state, /files/{read,browse,download}, /health.

File paths are confined to the agent's sandboxes (its work dir's `slaves`
tree): anything else, or a path that does not exist, is 404, as Mesos
answers for paths it has not attached.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from scylla_singa.mesos.api.fields import VERSION
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .task_runner import AgentTask

MAX_READ = 16 * 1024 * 1024


def _task_json(t: AgentTask) -> dict[str, Any]:
    res = t.info.get("resources") or []
    return {"id": t.task_id, "name": t.info.get("name", ""), "framework_id": t.framework_id,
            "executor_id": t.task_id, "slave_id": t.agent_id, "state": t.state, "resources": res,
            "statuses": [t.last_status] if t.last_status else [],
            "container": t.info.get("container"), "labels": t.info.get("labels")}


def agent_state_json(core: AgentCore, flags: dict[str, Any]) -> dict[str, Any]:
    """Mesos's agent /state, reduced: id, hostname, frameworks -> executors (one per task) -> tasks."""
    def frameworks(tasks: list[AgentTask], completed: bool) -> list[dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for t in tasks:
            fw = out.setdefault(t.framework_id, {"id": t.framework_id, "name": t.framework.get("name", ""),
                                                 "user": t.framework.get("user", ""), "executors": [],
                                                 "completed_executors": []})
            ex = {"id": t.task_id, "name": t.info.get("name", ""), "source": t.task_id,
                  "container": t.container_id, "directory": str(t.sandbox or ""),
                  "tasks": [] if completed else [_task_json(t)],
                  "completed_tasks": [_task_json(t)] if completed else [],
                  "queued_tasks": []}
            fw["completed_executors" if completed else "executors"].append(ex)
        return list(out.values())

    live = [t for t in core.tasks.values()]
    done = [t for t in core.completed if t.state in TERMINAL_TASK_STATES]
    info = core.info
    return {"id": core.agent_id, "hostname": info.hostname, "port": info.port,
            "pid": f"slave(1)@{info.ip}:{info.port}", "version": VERSION,
            "resources": info.resources.to_dict(), "attributes": {a["name"]: _attr(a) for a in info.attributes},
            "frameworks": frameworks(live, False), "completed_frameworks": frameworks(done, True),
            "flags": flags, "start_time": flags.get("start_time", time.time())}


def _attr(a: dict[str, Any]) -> Any:
    kind = a.get("type")
    return a["text"]["value"] if kind == "TEXT" else a["scalar"]["value"] if kind == "SCALAR" else str(a)


class AgentHTTP:
    """Handlers for one agent: `roots` are the directories file paths must stay within."""

    def __init__(self, core: AgentCore, roots: list[Path], flags: dict[str, Any]) -> None:
        self.core = core
        self.roots = [os.path.realpath(r) for r in roots]
        self.flags = flags

    def app(self) -> web.Application:
        app = web.Application()
        for prefix in ("", "/slave(1)"):
            app.router.add_get(prefix + "/state", self.state)
            app.router.add_get(prefix + "/state.json", self.state)
        app.router.add_get("/files/read", self.read)
        app.router.add_get("/files/read.json", self.read)
        app.router.add_get("/files/browse", self.browse)
        app.router.add_get("/files/browse.json", self.browse)
        app.router.add_get("/files/download", self.download)
        app.router.add_get("/files/download.json", self.download)
        app.router.add_get("/health", self.health)
        return app

    def _confined(self, request: web.Request) -> str:
        raw = request.query.get("path")
        if not raw:
            raise web.HTTPBadRequest(text="Expecting 'path' to be present")
        real = os.path.realpath(raw)
        if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in self.roots):
            raise web.HTTPNotFound(text=f"No file or directory found at path '{raw}'")
        if not os.path.exists(real):
            raise web.HTTPNotFound(text=f"No file or directory found at path '{raw}'")
        return real

    async def state(self, request: web.Request) -> web.Response:
        return web.json_response(agent_state_json(self.core, self.flags))

    async def read(self, request: web.Request) -> web.Response:
        """Mesos /files/read: {"data", "offset"}; offset=-1 answers the file's size and no data."""
        path = self._confined(request)
        if os.path.isdir(path):
            raise web.HTTPBadRequest(text="Cannot read a directory")
        size = os.path.getsize(path)
        try:
            offset = int(request.query.get("offset", "0"))
            length = int(request.query.get("length", str(MAX_READ)))
        except ValueError:
            raise web.HTTPBadRequest(text="Failed to parse offset/length: not integers") from None
        if offset == -1:
            return web.json_response({"data": "", "offset": size})
        if offset < 0 or length < -1:
            raise web.HTTPBadRequest(text="Negative offset or length")
        length = MAX_READ if length == -1 else min(length, MAX_READ)
        with open(path, "rb") as f:
            f.seek(min(offset, size))
            data = f.read(length)
        return web.json_response({"data": data.decode("utf-8", errors="replace"), "offset": offset})

    async def browse(self, request: web.Request) -> web.Response:
        path = self._confined(request)
        if not os.path.isdir(path):
            raise web.HTTPBadRequest(text="Not a directory")
        out = []
        for name in sorted(os.listdir(path)):
            st = os.lstat(os.path.join(path, name))
            out.append({"path": os.path.join(path, name), "size": st.st_size, "mtime": st.st_mtime,
                        "mode": stat.filemode(st.st_mode), "nlink": st.st_nlink, "uid": str(st.st_uid),
                        "gid": str(st.st_gid)})
        return web.json_response(out)

    async def download(self, request: web.Request) -> web.StreamResponse:
        path = self._confined(request)
        if os.path.isdir(path):
            raise web.HTTPBadRequest(text="Cannot download a directory")
        return web.FileResponse(path, headers={
            "Content-Disposition": f'attachment; filename="{os.path.basename(path)}"'})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)
