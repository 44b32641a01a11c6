"""The master's web UI and Prometheus endpoint (aiohttp routes added to the master's app).

    GET /                 the cluster page (static/master.html + master.js, polls /ui/state)
    GET /ui/state         the page model (master_view.cluster_view) as JSON
    GET /ui/log           the log viewer page (static/log.html + log.js)
    GET /ui/api/log       a task's stdout/stderr, read from its agent (agent_files)
    GET /ui/static/{name} the page's script and style
    GET /metrics          Prometheus text (master_view.cluster_metrics)

Handlers run on the master's event loop and only read its state.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import aiohttp
from aiohttp import web

from scylla_singa.mesos.master import operator_v1
from scylla_singa.mesos.master.master_metrics import metrics_json
from scylla_singa.mesos.master.operator_views import master_state_json
from . import assets
from scylla_singa.mesos.api.credentials import Credential
from .agent_files import LogError, parse_request, read_task_file
from .master_view import cluster_metrics, cluster_view
from .prometheus import CONTENT_TYPE, render

if TYPE_CHECKING:
    from scylla_singa.mesos.master.master_core import Master


class MasterPage:
    """Request handlers bound to one Master."""

    def __init__(self, master: Master) -> None:
        self.m = master

    async def index(self, request: web.Request) -> web.StreamResponse:
        return assets.page("master.html")

    async def state(self, request: web.Request) -> web.Response:
        view = cluster_view(master_state_json(self.m, extras=True), metrics_json(self.m), time.time(),
                            {"type": "GET_TASKS", "get_tasks": operator_v1.get_tasks(self.m)})
        return web.json_response(view, headers={"Cache-Control": "no-store"})

    async def metrics(self, request: web.Request) -> web.Response:
        text = render(cluster_metrics(master_state_json(self.m), metrics_json(self.m)))
        return web.Response(body=text.encode(), headers={"Content-Type": CONTENT_TYPE})

    async def log_page(self, request: web.Request) -> web.StreamResponse:
        return assets.page("log.html")

    async def log(self, request: web.Request) -> web.Response:
        """A chunk of a task's stdout/stderr; the agent is found in the master's own records."""
        try:
            agent_id, task_id, name, offset = parse_request(request.query)
            agent = self.m.agent_registry.agents.get(agent_id)
            if agent is None:
                raise LogError(404, f"no agent {agent_id} is registered")
            if not agent.port:
                raise LogError(404, f"agent {agent.hostname} serves no files (a simulated agent)")
            # The agent's sandboxes are read as the agent's own principal: the one credential the
            # master knows the agent accepts (it registered with it).
            creds = self.m.cfg.credentials or {}
            headers = (Credential(agent.principal, creds[agent.principal]).headers()
                       if agent.principal in creds else None)
            async with aiohttp.ClientSession(headers=headers) as http:
                chunk = await read_task_file(http, f"http://{agent.ip}:{agent.port}", task_id, name, offset)
        except LogError as exc:
            return web.json_response({"error": exc.message}, status=exc.status)
        return web.json_response({**chunk, "task": task_id, "hostname": agent.hostname, "file": name},
                                 headers={"Cache-Control": "no-store"})


def routes(master: Master) -> list[web.RouteDef]:
    """The UI's routes for the master's aiohttp app."""
    page = MasterPage(master)
    return [web.get("/", page.index), web.get("/ui/state", page.state), web.get("/ui/log", page.log_page),
            web.get("/ui/api/log", page.log), web.get("/metrics", page.metrics), assets.route()]
