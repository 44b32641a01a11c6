"""The agent's HTTP endpoints: Mesos's read-only ones (/state, /flags, /containers, /monitor/statistics,
/metrics/snapshot, /version, /health, each also under /slave(1)), the v1 operator API (POST /api/v1), and
/files/{read,browse,download}.

Shapes are in agent_views.py. File paths are confined to the agent's
sandboxes (its work dir's `slaves` tree): anything else, or a path that does
not exist, is 404 with an empty body, as Mesos answers for paths it has not
attached.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from scylla_singa.mesos.api.fields import build_info
from scylla_singa.mesos.api.http_answers import MAX_BODY, json_answer, mesos_not_found
from scylla_singa.mesos.api.http_auth import AuthPolicy, authentication_middleware
from . import agent_views
from .agent_operator_api import AgentOperatorEndpoint
from .confined_paths import PathRefused, open_confined

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .nested_containers import NestedContainers
    from .standalone_containers import StandaloneContainers

MAX_READ = 16 * 1024 * 1024


class AgentHTTP:
    """Handlers for one agent: `roots` are the directories file paths must stay within; `flags` its flags
    (strings, agent_views.agent_flags); `extra_routes` the agent's other APIs (the executor API);
    `standalone` and `nested` its operator-launched containers (None: a simulated agent, which runs none)."""

    def __init__(self, core: AgentCore, roots: list[Path], flags: dict[str, str], start_time: float,
                 gc_delay_s: float, extra_routes: list[web.RouteDef] | None = None,
                 auth: AuthPolicy = AuthPolicy(None), standalone: StandaloneContainers | None = None,
                 nested: NestedContainers | None = None) -> None:
        self.core = core
        self.standalone = standalone
        self.nested = nested
        self.auth = auth
        self.roots = [os.path.realpath(r) for r in roots]
        self.flags = flags
        self.start_time = start_time
        self.gc_delay_s = gc_delay_s
        self.extra_routes = list(extra_routes or [])

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[
            authentication_middleware(self.auth, "use a principal of the agent's --http-credentials file"),
            mesos_not_found])
        operator = AgentOperatorEndpoint(self.core, self, self.standalone, self.nested)
        for prefix in ("", "/slave(1)"):
            for name, view in (("state", self.state), ("state.json", self.state), ("flags", self.flags_view),
                               ("containers", self.containers), ("monitor/statistics", self.statistics),
                               ("monitor/statistics.json", self.statistics), ("health", self.health)):
                app.router.add_get(f"{prefix}/{name}", view)
            app.router.add_route("*", prefix + "/api/v1", operator.handle)
        app.router.add_get("/version", self.version)
        app.router.add_get("/metrics/snapshot", self.metrics)
        app.router.add_get("/files/read", self.read)
        app.router.add_get("/files/read.json", self.read)
        app.router.add_get("/files/browse", self.browse)
        app.router.add_get("/files/browse.json", self.browse)
        app.router.add_get("/files/download", self.download)
        app.router.add_get("/files/download.json", self.download)
        app.add_routes(self.extra_routes)
        return app

    def master_hostname(self) -> str:
        return self.flags.get("master", "").split("//")[-1].split("/")[0].rsplit(":", 1)[0] or "localhost"

    def metrics_snapshot(self) -> dict[str, float]:
        return agent_views.metrics_json(self.core, self.start_time, self.gc_delay_s)

    def _confined(self, request: web.Request) -> str:
        raw = request.query.get("path")
        if not raw:
            raise web.HTTPBadRequest(text="Expecting 'path' to be present")
        real = self.confined_path(raw)
        if real is None:
            raise web.HTTPNotFound(text="")  # Mesos: 404, empty body
        return real

    def confined_path(self, raw: str) -> str | None:
        """The real path of `raw` if it exists within the agent's sandboxes, else None."""
        real = os.path.realpath(raw)
        if not any(real == r or real.startswith(r.rstrip("/") + "/") for r in self.roots) or not os.path.exists(real):
            return None
        return real

    def file_infos(self, real: str) -> list[dict[str, Any]]:
        """The entries of the directory `real` (a path confined_path returned): name, size, times, owner."""
        out = []
        for name in sorted(os.listdir(real)):
            st = os.lstat(os.path.join(real, name))
            out.append({"path": os.path.join(real, name), "size": st.st_size, "mtime": st.st_mtime,
                        "mode": st.st_mode, "nlink": st.st_nlink, "uid": str(st.st_uid), "gid": str(st.st_gid)})
        return out

    def file_part(self, real: str, offset: int, length: int) -> tuple[int, bytes]:
        """(the file's size, at most `length` bytes of it from `offset`) of the file `real`; web.HTTPNotFound
        if it cannot be opened without following a symlink."""
        size = os.path.getsize(real)
        with self._open(real) as f:
            f.seek(min(offset, size))
            return size, f.read(min(length, MAX_READ))

    async def state(self, request: web.Request) -> web.Response:
        return json_answer(agent_views.state_json(self.core, self.flags, self.start_time, self.master_hostname()))

    async def flags_view(self, request: web.Request) -> web.Response:
        return json_answer({"flags": self.flags})

    async def containers(self, request: web.Request) -> web.Response:
        return json_answer(agent_views.containers_json(self.core))

    async def statistics(self, request: web.Request) -> web.Response:
        return json_answer(agent_views.monitor_statistics_json(self.core))

    async def metrics(self, request: web.Request) -> web.Response:
        return json_answer(self.metrics_snapshot())

    async def version(self, request: web.Request) -> web.Response:
        return json_answer(build_info())

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
            return json_answer({"data": "", "offset": size})
        if offset < 0 or length < -1:
            raise web.HTTPBadRequest(text="Negative offset or length")
        _, data = self.file_part(path, offset, MAX_READ if length == -1 else length)
        return json_answer({"data": data.decode("utf-8", errors="replace"), "offset": offset})

    async def browse(self, request: web.Request) -> web.Response:
        path = self._confined(request)
        if not os.path.isdir(path):
            raise web.HTTPBadRequest(text="Not a directory")
        return json_answer([{**info, "mode": stat.filemode(info["mode"])} for info in self.file_infos(path)])

    async def download(self, request: web.Request) -> web.StreamResponse:
        path = self._confined(request)
        if os.path.isdir(path):
            raise web.HTTPBadRequest(text="Cannot download a directory")
        with self._open(path) as f:
            resp = web.StreamResponse(headers={
                "Content-Type": "application/octet-stream",
                "Content-Disposition": f'attachment; filename="{os.path.basename(path)}"'})
            await resp.prepare(request)
            while chunk := f.read(1 << 16):
                await resp.write(chunk)
        await resp.write_eof()
        return resp

    def _open(self, real: str):
        """The file `real` (a path _confined returned) opened from its root down with no symlink followed: a
        task swapping a sandbox file for a symlink after the check gets 404, not /etc/shadow."""
        try:
            return os.fdopen(open_confined(real, self.roots, flags=os.O_RDONLY), "rb")
        except (PathRefused, OSError):
            raise web.HTTPNotFound(text="") from None

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)
