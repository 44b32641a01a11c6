"""A master and agents in-process: the default cluster of `scylla-singa run` and of the tests.

    with EmbeddedMesos(agents=2) as mesos:          # Docker agents on the local engine
        driver = MesosSchedulerDriver(sched, framework, mesos.master_address, failover=True)

`master_routes` adds routes to the master's app (the command line passes
the web UI's); without them the master serves the Mesos API and the
operator endpoints only.

Everything runs on one asyncio loop in a daemon thread. `start()` returns
once the agents are registered; `stop()` (idempotent) removes the agents'
containers, closes the servers and joins the thread.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import tempfile
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from scylla_singa.common.home import scylla_home
from scylla_singa.common.waiting import WaitTimeout, wait_until_async
from scylla_singa.mesos.agent.agent_server import Agent, AgentConfig
from scylla_singa.mesos.agent.simulated_fleet import DEFAULT_SIM_RESOURCES, SimulatedFleet
from scylla_singa.mesos.api.credentials import AGENT_PRINCIPAL, FRAMEWORK_PRINCIPAL, Credential
from scylla_singa.mesos.master.master_http import MasterServer, RouteFactory
from scylla_singa.mesos.master.master_records import MasterConfig

T = TypeVar("T")


@dataclass
class AgentSpec:
    """One embedded agent: resources/attributes in Mesos text form; None means the default."""

    resources: str | None = None
    attributes: str | None = None
    hostname: str | None = None
    simulate: bool | None = None


class EmbeddedMesos:
    """Master + agents on a private event loop (see module docstring)."""

    def __init__(self, agents: int | Sequence[AgentSpec | dict[str, Any]] = 1, *, simulate: bool = False,
                 host: str = "127.0.0.1", port: int = 0, work_dir: Path | str | None = None,
                 docker_host: str | None = None, docker_client: Any = None, allocator: str = "drf",
                 allocation_interval: float = 1.0, offer_timeout: float | None = None,
                 heartbeat_interval: float = 15.0, retry_interval: float = 2.0,
                 allowed_host_paths: Sequence[Path | str] | None = None, hdfs: str | None = None,
                 credentials: dict[str, str] | None = None, insecure: bool = False,
                 authenticate_readonly: bool = True, acls: Any = None, allow_root_tasks: bool = False,
                 fleet: int = 0,
                 fleet_resources: str = DEFAULT_SIM_RESOURCES, agent_reregister_timeout: float = 75.0,
                 default_kill_grace: float = 3.0, start_timeout: float = 30.0, use_docker: bool = True,
                 master_routes: Sequence[RouteFactory] = ()) -> None:
        specs = [AgentSpec() for _ in range(agents)] if isinstance(agents, int) else \
            [a if isinstance(a, AgentSpec) else AgentSpec(**a) for a in agents]
        self.specs = specs
        self.simulate = simulate
        self._own_dir = work_dir is None
        self.work_dir = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="scylla-mesos-"))
        self.credentials = None if insecure else _with_own_principals(credentials)
        self.allow_root_tasks = allow_root_tasks
        self.master_config = MasterConfig(
            host=host, port=port, work_dir=self.work_dir / "master", allocator=allocator,
            allocation_interval=allocation_interval, offer_timeout=offer_timeout,
            heartbeat_interval=heartbeat_interval, credentials=self.credentials,
            authenticate_readonly=authenticate_readonly, acls=acls,
            agent_reregister_timeout=agent_reregister_timeout, default_kill_grace=default_kill_grace)
        self.host = host
        self.docker_host = docker_host
        self.docker_client = docker_client
        self.retry_interval = retry_interval
        self.allowed_host_paths = [Path(p) for p in (allowed_host_paths or [scylla_home() / "jobs"])]
        self.hdfs = hdfs
        self.fleet_size = fleet
        self.fleet_resources = fleet_resources
        self.default_kill_grace = default_kill_grace
        self.start_timeout = start_timeout
        self.use_docker = use_docker
        self.master_routes = tuple(master_routes)  # e.g. the web UI (scylla_singa.ui.master_page.routes)
        self.server: MasterServer | None = None
        self.agents: list[Agent] = []
        self.fleet: SimulatedFleet | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._started = False

    # ---- public -------------------------------------------------------
    @property
    def framework_credential(self) -> Credential | None:
        """What a framework (and an operator) on this cluster authenticates with; None when insecure."""
        return _credential(self.credentials, FRAMEWORK_PRINCIPAL)

    @property
    def agent_credential(self) -> Credential | None:
        """What this cluster's agents register with; None when insecure."""
        return _credential(self.credentials, AGENT_PRINCIPAL)

    @property
    def http_auth(self) -> tuple[str, str] | None:
        """(principal, secret) for an HTTP client's basic auth (requests' `auth=`); None when insecure."""
        cred = self.framework_credential
        return (cred.principal, cred.secret) if cred else None

    @property
    def master_address(self) -> str:
        """ "host:port" of the master (valid after start())."""
        if self.server is None:
            raise RuntimeError("EmbeddedMesos is not started")
        return self.server.address

    @property
    def agent_addresses(self) -> list[str]:
        """ "host:port" of each agent's HTTP endpoints (/state, /files/read)."""
        return [a.address for a in self.agents]

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    def start(self) -> EmbeddedMesos:
        """Start the master and agents and wait until the agents are registered. Idempotent."""
        with self._lock:
            if self._started:
                return self
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="embedded-mesos", daemon=True)
            self._thread.start()
            self._started = True
        try:
            self.call(self._start(), timeout=self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Kill the agents' tasks (containers removed), stop everything, join the thread. Idempotent."""
        with self._lock:
            if not self._started:
                return
            self._started = False
        try:
            self.call(self._stop(), timeout=120)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=30)
            self._loop.close()
            if self._own_dir:
                shutil.rmtree(self.work_dir, ignore_errors=True)

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = 60) -> T:
        """Run a coroutine on the cluster's loop and wait for its result (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def run_soon(self, fn, *args) -> None:
        """Call `fn(*args)` on the cluster's loop."""
        self.loop.call_soon_threadsafe(fn, *args)

    def restart_master(self) -> None:
        """Stop the master and start a new one on the same port and work dir (agents re-register)."""
        self.call(self._restart_master())

    def stop_agent(self, index: int, kill: bool = False) -> None:
        """Stop agent `index` (its tasks keep running unless `kill`)."""
        self.call(self.agents[index].stop(kill=kill))

    def start_agent(self, index: int) -> None:
        """Start agent `index` again on its work dir and port (it recovers its tasks)."""
        old = self.agents[index]
        cfg = AgentConfig(**{**old.cfg.__dict__})
        self.agents[index] = self._new_agent_from(cfg)
        self.call(self.agents[index].start())

    def __enter__(self) -> EmbeddedMesos:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- on the loop ----------------------------------------------------
    async def _start(self) -> None:
        self.server = MasterServer(self.master_config, extra_routes=self.master_routes)
        await self.server.start()
        for i, spec in enumerate(self.specs):
            self.agents.append(self._new_agent(i, spec))
        await asyncio.gather(*(a.start() for a in self.agents))
        if self.fleet_size:
            self.fleet = SimulatedFleet(self.master_address, self.fleet_size, self.fleet_resources,
                                        hostname_prefix="fleet", retry_interval=self.retry_interval,
                                        credential=self.agent_credential)
            await self.fleet.start()
        await self._wait_registered()

    def _new_agent(self, i: int, spec: AgentSpec) -> Agent:
        simulate = self.simulate if spec.simulate is None else spec.simulate
        resources = spec.resources or (DEFAULT_SIM_RESOURCES if simulate else None)
        cfg = AgentConfig(master=self.master_address, host=self.host, port=0,
                          hostname=spec.hostname or f"agent-{i}", resources=resources,
                          attributes=spec.attributes, work_dir=self.work_dir / f"agent-{i}",
                          docker_host=self.docker_host, simulate=simulate, use_docker=self.use_docker,
                          allowed_host_paths=self.allowed_host_paths, hdfs=self.hdfs,
                          retry_interval=self.retry_interval, default_grace=self.default_kill_grace,
                          credential=self.agent_credential, http_credentials=self.credentials,
                          allow_root_tasks=self.allow_root_tasks)
        return self._new_agent_from(cfg)

    def _new_agent_from(self, cfg: AgentConfig) -> Agent:
        return Agent(cfg, docker_client=None if cfg.simulate else self.docker_client)

    async def _wait_registered(self) -> None:
        def registered() -> bool:
            cores = [a.core for a in self.agents] + (self.fleet.cores if self.fleet else [])
            return all(c is not None and c.registered for c in cores)
        try:
            await wait_until_async(registered, self.start_timeout, "the embedded agents to register with the master",
                                   interval_s=0.01)
        except WaitTimeout:
            raise TimeoutError("embedded agents did not register with the master in time") from None

    async def _stop(self) -> None:
        await asyncio.gather(*(a.stop(kill=True) for a in self.agents), return_exceptions=True)
        if self.fleet:
            await self.fleet.stop()
        if self.server:
            await self.server.stop()

    async def _restart_master(self) -> None:
        port = self.server.cfg.port
        await self.server.stop()
        cfg = MasterConfig(**{**self.master_config.__dict__, "port": port})
        self.server = MasterServer(cfg, extra_routes=self.master_routes)
        await self.server.start()


def _with_own_principals(given: dict[str, str] | None) -> dict[str, str]:
    """`given` credentials (or a framework principal of its own) plus the agents' principal, with fresh secrets.

    The embedded cluster is secure like any other: its master binds
    loopback, and still nobody without the secret (which never leaves this
    process) reaches it; its framework and agents are handed theirs directly.
    """
    creds = dict(given) if given else {FRAMEWORK_PRINCIPAL: secrets.token_urlsafe(32)}
    creds.setdefault(AGENT_PRINCIPAL, secrets.token_urlsafe(32))
    return creds


def _credential(creds: dict[str, str] | None, principal: str) -> Credential | None:
    if not creds:
        return None
    if principal not in creds:   # credentials given by the caller: the first that is not the agents'
        principal = next((p for p in creds if p != AGENT_PRINCIPAL), principal)
    return Credential(principal, creds[principal]) if principal in creds else None
