"""The master's HTTP shell (aiohttp): scheduler API, agent links, operator endpoints.

Handlers only translate HTTP to `Master` calls and back; the event stream of
a subscribed framework is a chunked RecordIO response fed from a queue.
`MasterServer` binds the port (0 picks a free one) and owns the Master.
Whoever composes a master adds more routes through `extra_routes` (the
command line and the embedded cluster add the web UI of scylla_singa.ui):
the master itself knows nothing of pages.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence

from aiohttp import WSMsgType, web

from scylla_singa.mesos.api import compact_json
from scylla_singa.mesos.api.fields import build_info
from scylla_singa.mesos.api.http_auth import PRINCIPAL_KEY, AuthPolicy, authentication_middleware
from scylla_singa.mesos.api.http_answers import MAX_BODY, json_answer, mesos_not_found, redirect, text
from scylla_singa.mesos.api.header_deadline import HeaderDeadlineSite
from scylla_singa.mesos.api.protocol import AGENT_WS_PATH, SCHEDULER_PATH
from .election import LeaderElector, StandaloneElector
from .master_core import Master
from .master_records import MasterConfig
from .master_metrics import metrics_json
from .operator_api import OperatorEndpoint
from .operator_views import (frameworks_json, master_flags, master_state_json, roles_json, slaves_json,
                             state_summary_json, tasks_json)
from .quota_calls import quota_status
from scylla_singa.mesos.api.event_stream import QueuedOutbox
from .scheduler_http import SchedulerEndpoint, leader_redirect

log = logging.getLogger(__name__)

CREDENTIALS_HINT = ("use a principal of the master's credentials file (a master makes one in its work dir on first "
                    "start: framework.credential for frameworks and operators, agent.credential for agents)")


class AgentLink(QueuedOutbox):
    """One agent WebSocket (one agent, or a whole simulated fleet); messages are batched per write."""

    def __init__(self, ws: web.WebSocketResponse, principal: str | None = None) -> None:
        super().__init__()
        self.ws = ws
        self.principal = principal   # who opened the link (None on an insecure master)
        self.last_seen = 0.0

    async def pump(self) -> None:
        while (batch := await self.take(5000)) is not None:
            text = compact_json.dumps(batch if len(batch) > 1 else batch[0])
            await self.ws.send_frame(text, WSMsgType.TEXT)   # UTF-8 already: no decode and encode again
        await self.ws.close()


# What the composing layer adds to a master's app (the web UI, /metrics): routes made for the Master.
RouteFactory = Callable[[Master], list[web.RouteDef]]


class MasterHTTP:
    """Request handlers bound to one Master; `extra_routes` are served beside them."""

    def __init__(self, master: Master, extra_routes: Sequence[RouteFactory] = ()) -> None:
        self.m = master
        self.extra_routes = tuple(extra_routes)
        self.scheduler = SchedulerEndpoint(master)

    def app(self) -> web.Application:
        policy = AuthPolicy(self.m.cfg.credentials, self.m.cfg.authenticate_readonly,
                            self_checked=frozenset({SCHEDULER_PATH, "/master" + SCHEDULER_PATH}),
                            always_paths=frozenset({AGENT_WS_PATH}))
        app = web.Application(client_max_size=MAX_BODY,
                              middlewares=[authentication_middleware(policy, CREDENTIALS_HINT), mesos_not_found])
        scheduler = self.scheduler
        operator = OperatorEndpoint(self.m)
        for prefix in ("", "/master"):
            app.router.add_route("*", prefix + SCHEDULER_PATH, scheduler.handle)
            app.router.add_route("*", prefix + "/api/v1", operator.handle)
            # Mesos's read-only endpoints; a standby redirects these to the leader (307), as Mesos does
            for name, view in (("state", self.state), ("state.json", self.state),
                               ("state-summary", self.state_summary), ("slaves", self.slaves),
                               ("frameworks", self.frameworks), ("tasks", self.tasks), ("tasks.json", self.tasks),
                               ("roles", self.roles), ("roles.json", self.roles)):
                for path in (f"{prefix}/{name}", f"{prefix}/{name}/"):   # libprocess takes both (avmesos-cli)
                    app.router.add_get(path, self._leading(view))
            # ... and these every master serves itself
            app.router.add_get(prefix + "/flags", self.flags)
            app.router.add_get(prefix + "/quota", self._leading(self.quota))
            app.router.add_get(prefix + "/maintenance/schedule", self._leading(self.maintenance_schedule))
            app.router.add_get(prefix + "/maintenance/status", self._leading(self.maintenance_status))
            app.router.add_get(prefix + "/health", self.health)
            app.router.add_get(prefix + "/redirect", self.redirect)
        app.router.add_get(AGENT_WS_PATH, self.agent_ws)
        app.router.add_get("/version", self.version)
        app.router.add_get("/metrics/snapshot", self.metrics)
        for make_routes in self.extra_routes:  # e.g. the web UI at / and Prometheus at /metrics (scylla_singa.ui)
            app.add_routes(make_routes(self.m))
        return app

    def _leading(self, view: Callable[[web.Request], Awaitable[web.Response]]
                 ) -> Callable[[web.Request], Awaitable[web.Response]]:
        """`view` on the leader; elsewhere the redirect (or 503) Mesos answers instead."""
        async def handler(request: web.Request) -> web.Response:
            return leader_redirect(self.m, request.path) or await view(request)
        return handler

    # ---- agents -------------------------------------------------------
    async def agent_ws(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=256 * 1024 * 1024)
        await ws.prepare(request)
        if self.m.leader_address is not None:
            await ws.send_str(json.dumps({"type": "NOT_LEADER", "leader": self.m.leader_address}))
            await ws.close()
            return ws
        link = AgentLink(ws, request[PRINCIPAL_KEY])
        self.m.agent_registry.link_opened(link)
        writer = asyncio.ensure_future(link.pump())
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    data = compact_json.loads(msg.data)
                except ValueError:
                    continue
                for item in data if isinstance(data, list) else [data]:
                    if isinstance(item, dict):
                        self.m.agent_registry.agent_message(link, item)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            link.close()
            writer.cancel()
            self.m.agent_registry.link_closed(link)
        return ws

    # ---- read-only endpoints (shapes in operator_views.py) -------------------------
    async def version(self, request: web.Request) -> web.Response:
        return json_answer(build_info())

    async def state(self, request: web.Request) -> web.Response:
        return json_answer(master_state_json(self.m))

    async def state_summary(self, request: web.Request) -> web.Response:
        return json_answer(state_summary_json(self.m))

    async def slaves(self, request: web.Request) -> web.Response:
        return json_answer(slaves_json(self.m))

    async def frameworks(self, request: web.Request) -> web.Response:
        return json_answer(frameworks_json(self.m, request.query.get("framework_id")))

    async def tasks(self, request: web.Request) -> web.Response:
        """?limit=N (100; negative: all) &offset=N &order=asc|des &framework_id= &task_id=, as Mesos reads them."""
        q = request.query
        try:
            limit, offset = int(q.get("limit", "100")), int(q.get("offset", "0"))
        except ValueError:
            return text(400, "Failed to parse query parameters 'limit' and 'offset': expecting integers")
        return json_answer(tasks_json(self.m, None if limit < 0 else limit, max(0, offset),
                                            q.get("order", "des") == "asc", q.get("framework_id"),
                                            q.get("task_id")))

    async def roles(self, request: web.Request) -> web.Response:
        return json_answer(roles_json(self.m))

    async def quota(self, request: web.Request) -> web.Response:
        """Mesos's v0 `GET /quota`: the QuotaStatus (changes go through the operator API's UPDATE_QUOTA)."""
        return json_answer(quota_status(self.m))

    async def maintenance_schedule(self, request: web.Request) -> web.Response:
        """Mesos's v0 `GET /maintenance/schedule` (changes go through UPDATE_MAINTENANCE_SCHEDULE)."""
        return json_answer({"windows": self.m.maintenance.windows})

    async def maintenance_status(self, request: web.Request) -> web.Response:
        return json_answer(self.m.maintenance.status())

    async def flags(self, request: web.Request) -> web.Response:
        return json_answer({"flags": master_flags(self.m)})

    async def metrics(self, request: web.Request) -> web.Response:
        return json_answer(metrics_json(self.m))

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def redirect(self, request: web.Request) -> web.Response:
        leader = self.m.leader_address or f"{self.m.cfg.advertise_host or self.m.cfg.host}:{self.m.cfg.port}"
        return redirect(f"//{leader}")


class MasterServer:
    """A Master served over HTTP on the running loop: `await start()`, `await stop()`."""

    def __init__(self, config: MasterConfig, elector: LeaderElector | None = None,
                 extra_routes: Sequence[RouteFactory] = ()) -> None:
        self.cfg = config
        self.elector = elector or StandaloneElector()
        self.extra_routes = tuple(extra_routes)
        self.master = Master(config)
        self._runner: web.AppRunner | None = None
        self.http: MasterHTTP | None = None
        # Called when this master stops leading: Mesos's master exits then (its soft state, agents
        # and frameworks must go to the new leader); `scylla-singa master` does the same.
        self.on_lost_leadership: Callable[[], None] | None = None

    @property
    def address(self) -> str:
        return f"{self.cfg.advertise_host or self.cfg.host}:{self.cfg.port}"

    async def start(self) -> None:
        """Bind (port 0 picks one; cfg.port is updated), start timers, contend for leadership."""
        loop = asyncio.get_running_loop()
        self.http = http = MasterHTTP(self.master, self.extra_routes)
        self._runner = web.AppRunner(http.app(), handler_cancellation=True, access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        # Scheduler calls take the quick lane (mesos/api/quick_lane.py); everything else is aiohttp's
        site = HeaderDeadlineSite(self._runner, self.cfg.host, self.cfg.port, reuse_address=True, backlog=1024,
                                  header_read_timeout=self.cfg.header_read_timeout, ssl_context=self.cfg.tls,
                                  lane_answerer=http.scheduler.quick_answer,
                                  lane_paths=frozenset({SCHEDULER_PATH, "/master" + SCHEDULER_PATH}))
        await site.start()
        self.cfg.port = self._runner.addresses[0][1]
        self.master.start(loop)
        if isinstance(self.elector, StandaloneElector):
            self.master.became_leader()
        else:
            self.master.leader_address = ""  # unknown until the first election result

        def on_change(leader: str | None) -> None:
            loop.call_soon_threadsafe(self._leader_changed, leader)
        self.elector.start(self.master.master_info(), on_change)

    def _leader_changed(self, leader: str | None) -> None:
        was = self.master.leader_address
        self.master.leader_address = None if leader == self.address else (leader or "")
        if was is not None and self.master.leader_address is None:
            log.info("master %s elected leader", self.address)
            self.master.became_leader()
        elif was is None and self.master.leader_address is not None:
            log.error("master %s lost leadership (leader now: %s)", self.address, leader or "none")
            if self.on_lost_leadership is not None:
                self.on_lost_leadership()

    async def stop(self) -> None:
        """Stop serving; idempotent."""
        self.elector.stop()
        self.master.stop()
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
