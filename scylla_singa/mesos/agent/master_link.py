"""An agent's connection to the master: one WebSocket carrying one agent or a whole simulated fleet.

Registers every core on (re)connect (re-registration with its id and tasks
once it has one), answers pings, routes the master's messages to cores by
agent id, resends unacknowledged status updates, follows NOT_LEADER to the
leading master and reconnects with backoff when the connection is lost
(a restarted master rebuilds its state from these re-registrations).
"""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
import time
from typing import Any

import aiohttp

from scylla_singa.mesos.api import compact_json
from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.mesos.api.tls import client_context, split_scheme
from scylla_singa.mesos.api.leader_znodes import resolve_zk_leader
from scylla_singa.mesos.api.protocol import AGENT_WS_PATH
from .agent_core import AgentCore

log = logging.getLogger(__name__)
REGISTER_RETRY_S = 5.0   # how long after a REGISTER_REFUSED the registration is asked again


class MasterLink:
    """Keeps `cores` registered with the master at `master` ("host:port" or zk://...)."""

    def __init__(self, master: str, cores: list[AgentCore], *, retry_tick: float = 0.5,
                 ping_timeout: float = 75.0, backoff_max: float = 2.0,
                 credential: Credential | None = None, tls: ssl.SSLContext | None = None) -> None:
        wants_tls, master = split_scheme(master)   # https://host:port: the masters serve TLS
        self.tls = tls or (client_context(None) if wants_tls else None)
        self.master = master
        self.credential = credential   # sent on every connect; the master binds our agent id to it
        self.refused: str | None = None   # why the master refused to register us, while it does
        # cores whose last registration the master answered REGISTER_REFUSED (ACLs, a machine DOWN for
        # maintenance), by ref: when. Only those are asked again: a core with a registration in flight is not,
        # or the master would register it twice.
        self._refused_refs: dict[str, float] = {}
        self.current = master
        self.by_ref: dict[str, AgentCore] = {}
        self.by_id: dict[str, AgentCore] = {}
        self.retry_tick = retry_tick
        self.ping_timeout = ping_timeout
        self.backoff_max = backoff_max
        self.connected = asyncio.Event()
        self._queue: asyncio.Queue[dict[str, Any]] | None = None
        self._task: asyncio.Task | None = None
        self._stopping = False
        self.connects = 0
        for core in cores:
            self.add(core)

    def add(self, core: AgentCore) -> None:
        core.send = self.send
        self.by_ref[core.ref] = core
        if core.agent_id:
            self.by_id[core.agent_id] = core
        if self._queue is not None and self.connected.is_set():
            self.send(core.registration())

    def send(self, message: dict[str, Any]) -> None:
        """Queue a message for the master; dropped while disconnected (updates are retried)."""
        if self._queue is not None and self.connected.is_set():
            self._queue.put_nowait(message)

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        delay = 0.05
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, connect=5)) as session:
            retries = asyncio.ensure_future(self._retry_loop())
            try:
                while not self._stopping:
                    try:
                        address = await self._resolve()
                        scheme = "wss" if self.tls else "ws"
                        async with session.ws_connect(f"{scheme}://{address}{AGENT_WS_PATH}", heartbeat=None,
                                                      ssl=self.tls if self.tls else True,
                                                      max_msg_size=256 * 1024 * 1024,
                                                      headers=self.credential.headers() if self.credential
                                                      else None) as ws:
                            delay = 0.05
                            await self._session(ws)
                    except aiohttp.WSServerHandshakeError as exc:
                        if exc.status != 401:
                            log.debug("master link to %s: handshake answered %s", self.current, exc.status)
                        else:
                            self._refuse(f"the master at {self.current} refused this agent's credential (401): "
                                         "give the agent --credential FILE with a principal of the master's "
                                         "credentials (a master makes agent.credential in its work dir)")
                        self.current = self.master
                    except Exception as exc:  # noqa: BLE001 - master or ZooKeeper unreachable: retry, never give up
                        # (not only network errors: kazoo raises its own KazooTimeoutError, say, when a
                        # cut-off host cannot reach ZooKeeper; a link task that ended here never came back)
                        log.debug("master link to %s: %s: %s", self.current, exc.__class__.__name__, exc)
                        # A leader named by a NOT_LEADER answer may be gone by now (it was killed and a
                        # standby elected): find the leader from the configured master (ZooKeeper) again.
                        self.current = self.master
                    self._disconnected()
                    if self._stopping:
                        break
                    await asyncio.sleep(delay * (1 + random.random()))
                    delay = min(self.backoff_max, delay * 2)
            finally:
                retries.cancel()
                self._disconnected()

    def _refuse(self, why: str) -> None:
        """Say once (per reason) why the master will not have us; the link keeps retrying with backoff."""
        if why != self.refused:
            log.error("%s", why)
        self.refused = why

    async def _resolve(self) -> str:
        if self.current.startswith(("zk://", "zoo://")):
            return await asyncio.to_thread(resolve_zk_leader, self.current)
        return self.current

    async def _session(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._queue = asyncio.Queue()
        self._refused_refs.clear()   # every core's registration is sent anew below
        self.connected.set()
        self.connects += 1
        writer = asyncio.ensure_future(self._pump(ws))
        try:
            for core in list(self.by_ref.values()):
                self.send(core.registration())
            while True:
                msg = await ws.receive(timeout=self.ping_timeout)
                if msg.type != aiohttp.WSMsgType.TEXT:
                    return
                data = compact_json.loads(msg.data)
                for item in data if isinstance(data, list) else [data]:
                    if isinstance(item, dict) and self._dispatch(item) == "reconnect":
                        return
        finally:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)

    async def _pump(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        queue = self._queue
        while True:
            batch = [await queue.get()]
            while not queue.empty() and len(batch) < 5000:
                batch.append(queue.get_nowait())
            await ws.send_str(compact_json.dumps(batch if len(batch) > 1 else batch[0]).decode())

    def _dispatch(self, msg: dict[str, Any]) -> str | None:
        kind = msg.get("type")
        if kind == "PING":
            self.send({"type": "PONG"})
        elif kind == "NOT_LEADER":
            self.current = msg.get("leader") or self.master
            return "reconnect"
        elif kind == "REGISTERED":
            if msg.get("ping_timeout_s"):
                # As a Mesos agent does: a master silent this long is gone; find the leader again.
                self.ping_timeout = float(msg["ping_timeout_s"])
            core = self.by_ref.get(msg.get("ref")) or self.by_id.get(msg.get("agent_id"))
            if core is not None:
                self.by_id[msg["agent_id"]] = core
                core.on_registered(msg["agent_id"])
        elif kind == "REGISTER_REFUSED":   # not allowed to register (ACLs, machine DOWN): asked again later
            self._refuse(f"the master refused to register this agent: {msg.get('message', '')}")
            if msg.get("ref") in self.by_ref:
                self._refused_refs[msg["ref"]] = time.monotonic()
        elif kind == "REREGISTER_REFUSED":
            core = self.by_ref.get(msg.get("ref")) or self.by_id.get(msg.get("agent_id"))
            if core is not None:
                self.by_id.pop(core.agent_id or "", None)
                core.on_refused(msg.get("message", ""))
                self.send(core.registration())
        else:
            core = self.by_id.get(msg.get("agent_id"))
            if core is not None:
                core.on_message(msg)
        return None

    def _disconnected(self) -> None:
        self.connected.clear()
        self._queue = None
        for core in self.by_ref.values():
            core.disconnected()

    async def _retry_loop(self) -> None:
        while True:
            await asyncio.sleep(self.retry_tick)
            if self.connected.is_set():
                now = time.monotonic()
                for core in self.by_ref.values():
                    if core.tasks:
                        core.retry(now)
                for ref, refused_at in list(self._refused_refs.items()):
                    if now - refused_at > REGISTER_RETRY_S:
                        del self._refused_refs[ref]
                        core = self.by_ref.get(ref)
                        if core is not None and not core.registered:
                            self.send(core.registration())
