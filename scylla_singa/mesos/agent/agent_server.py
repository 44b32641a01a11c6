"""A Mesos-compatible agent: runs tasks in Docker (or as processes, or simulated), serves its sandboxes.

`Agent(config)` on a running asyncio loop: `await start()` recovers tasks
from the work dir, binds the HTTP endpoints and registers with the master;
`await stop(kill=True)` stops (removing its containers when `kill`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from scylla_singa.common.home import scylla_home
from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.mesos.api.http_auth import OPEN_PATHS, AuthPolicy
from scylla_singa.mesos.api.reservations import base_name
from scylla_singa.mesos.api.resources import Resources, parse_attributes
from .agent_core import AgentCore, AgentInfo
from .agent_http import AgentHTTP
from .agent_views import agent_flags
from .master_link import MasterLink
from .process_runner import ProcessRunner
from .nested_containers import NestedContainers, parent_finder
from .standalone_containers import StandaloneContainers
from .simulated_runner import SimulatedRunner
from .composite_runner import CompositeRunner
from .executor_api import ExecutorEndpoint
from .task_runner import TaskRunner


log = logging.getLogger(__name__)
DEFAULT_PORTS = "[31000-32000]"


def default_resources(work_dir: Path | None = None) -> str:
    """What this machine has, as Mesos computes it: all CPUs, memory less min(1 GB, half), free disk."""
    cpus = os.cpu_count() or 1
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError):
        total_mb = 2048
    mem = max(32, total_mb - min(1024, total_mb // 2))
    try:
        disk = shutil.disk_usage(work_dir or tempfile.gettempdir()).free // (1024 * 1024)
    except OSError:
        disk = 10240
    disk = max(0, disk - min(5120, disk // 2))
    return f"cpus:{cpus};mem:{mem};disk:{disk};ports:{DEFAULT_PORTS}"


def resources_with_defaults(text: str | None, work_dir: Path | None) -> Resources:
    """`--resources` text; missing cpus/mem/disk/ports are filled in from the machine (a resource given in
    any role, `cpus(ml):2`, is not missing: as with Mesos's agents, it is all there is of it)."""
    given = Resources.parse(text or "")
    machine = Resources.parse(default_resources(work_dir))
    named = {base_name(k) for k in (*given.scalars, *given.ranges)}
    scalars = {k: v for k, v in machine.scalars.items() if k not in named}
    ranges = {k: v for k, v in machine.ranges.items() if k not in named}
    return given + Resources(scalars, ranges)


@dataclass
class AgentConfig:
    """The agent's flags (see `scylla-singa agent --help`)."""

    master: str
    host: str = "127.0.0.1"
    port: int = 5051
    hostname: str | None = None
    advertise_ip: str | None = None
    resources: str | None = None
    attributes: str | None = None
    work_dir: Path | None = None
    docker_host: str | None = None
    use_docker: bool = True
    simulate: bool = False
    allowed_host_paths: list[Path] = field(default_factory=lambda: [scylla_home() / "jobs"])
    # Local files (file://, bare paths) the fetcher may copy into a sandbox: only from under these. Our own
    # delivery fetches nothing local (volumes are mounted, HDFS is fetched over WebHDFS): the jobs root only.
    fetcher_allowed_roots: list[Path] = field(default_factory=lambda: [scylla_home() / "jobs"])
    # Whether tasks may run as uid 0 (a process task's user, a container's user): off, as secure by default.
    allow_root_tasks: bool = False
    hdfs: str | None = None
    retry_interval: float = 10.0
    gc_delay: float = 7 * 86400.0
    default_grace: float = 3.0
    ping_timeout: float = 75.0       # until the master says its own (REGISTERED.ping_timeout_s)
    engine_check_interval: float = 2.0
    credential: Credential | None = None          # how it proves itself to the master (--credential)
    http_credentials: dict[str, str] | None = None   # who may call its endpoints (--http-credentials)
    authenticate_readonly: bool = True            # /state, /files/*, /metrics too, not only writes
    authenticate_executors: bool = True           # executors' calls carry their own token (secure agents)
    master_tls: Any = None                        # ssl.SSLContext it verifies an https:// master with (--tls-ca)

    def http_auth(self) -> AuthPolicy:
        """Who may call this agent's endpoints: its --http-credentials, and its own credential (the master
        reads sandboxes for its log view as the agent's principal). Neither: insecure, anyone."""
        known = dict(self.http_credentials or {})
        if self.credential is not None:
            known[self.credential.principal] = self.credential.secret
        # The executor API authenticates its callers itself, by each executor's own token
        return AuthPolicy(known or None, self.authenticate_readonly,
                          open_paths=OPEN_PATHS | {"/slave(1)/health", "/api/v1/executor",
                                                           "/slave(1)/api/v1/executor"})


class Agent:
    """One agent with its own HTTP server and master link."""

    def __init__(self, config: AgentConfig, docker_client: Any = None) -> None:
        self.cfg = config
        self.work_dir = Path(config.work_dir or tempfile.mkdtemp(prefix="scylla-agent-"))
        self._docker_client = docker_client
        self.docker_runner = None
        self.core: AgentCore | None = None
        self.link: MasterLink | None = None
        self._runner: web.AppRunner | None = None
        self._gc: asyncio.Task | None = None
        self._watch: asyncio.Task | None = None
        self.standalone: StandaloneContainers | None = None   # the operator's containers (none when simulated)
        self.nested: NestedContainers | None = None

    @property
    def address(self) -> str:
        return f"{self.cfg.advertise_ip or self.cfg.host}:{self.cfg.port}"

    @property
    def agent_id(self) -> str | None:
        return self.core.agent_id if self.core else None

    def _runner_for(self) -> TaskRunner:
        if self.cfg.simulate:
            return SimulatedRunner()
        docker_runner = None
        if self.cfg.use_docker:
            from .docker_runner import DockerRunner  # the Docker SDK only when needed
            client = self._docker_client
            if client is None:
                import docker
                client = (docker.DockerClient(base_url=self.cfg.docker_host, timeout=120) if self.cfg.docker_host
                          else docker.from_env(timeout=120))
                self._docker_client = client
            docker_runner = DockerRunner(client, list(self.cfg.allowed_host_paths),
                                         allow_root_tasks=self.cfg.allow_root_tasks)
            self.docker_runner = docker_runner
        return CompositeRunner(docker_runner, ProcessRunner(self.cfg.advertise_ip or self.cfg.host,
                                                            allow_root_tasks=self.cfg.allow_root_tasks))

    async def start(self) -> None:
        """Recover, serve HTTP (port 0 picks one), connect to the master."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        # what the agent keeps of its tasks (TaskInfos, their environments and secrets): root's alone; the
        # sandboxes beside it are reached by their tasks' users
        (self.work_dir / "meta").mkdir(exist_ok=True)
        os.chmod(self.work_dir / "meta", 0o700)
        hostname = self.cfg.hostname or socket.gethostname()
        info = AgentInfo(hostname, resources_with_defaults(self.cfg.resources, self.work_dir),
                         parse_attributes(self.cfg.attributes or ""), 0, self.cfg.advertise_ip or self.cfg.host)
        self.core = AgentCore(info, self._runner_for(), work_dir=self.work_dir,
                              retry_interval=self.cfg.retry_interval, hdfs_url=self.cfg.hdfs,
                              default_grace=self.cfg.default_grace,
                              fetcher_roots=tuple(self.cfg.fetcher_allowed_roots))
        if self.docker_runner is not None:
            self.docker_runner.health_listener = self.core.set_health
            self.docker_runner.image_timer = self.core.image_pull_ms.append
        await self.core.recover()
        flags = agent_flags(self.cfg, str(self.work_dir), self.cfg.port, hostname)
        runner = self.core.runner
        executor_api = (ExecutorEndpoint(runner.executors,
                                         authenticate=self.cfg.http_auth().secure and self.cfg.authenticate_executors)
                        if isinstance(runner, CompositeRunner) else None)
        if not self.cfg.simulate:
            self.standalone = StandaloneContainers(self.work_dir, self.cfg.allow_root_tasks)
            self.nested = NestedContainers(parent_finder(self.core, self.standalone),
                                           self.docker_runner.client if self.docker_runner is not None else None)
        http = AgentHTTP(self.core, [self.work_dir / "slaves"], flags, time.time(), self.cfg.gc_delay,
                         executor_api.routes() if executor_api is not None else None, self.cfg.http_auth(),
                         self.standalone, self.nested)
        self._runner = web.AppRunner(http.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.cfg.host, self.cfg.port, reuse_address=True)
        await site.start()
        self.cfg.port = self._runner.addresses[0][1]
        info.port = self.cfg.port
        if isinstance(runner, CompositeRunner):   # executors and groups reach this agent at its address
            runner.attach(self.core, f"{info.ip}:{info.port}")
        flags["port"] = str(self.cfg.port)
        self.link = MasterLink(self.cfg.master, [self.core], ping_timeout=self.cfg.ping_timeout,
                               credential=self.cfg.credential, tls=self.cfg.master_tls)
        self.link.start()
        self._gc = asyncio.ensure_future(self._gc_loop())
        if self.docker_runner is not None:
            self._watch = asyncio.ensure_future(self._engine_watch())

    async def _engine_watch(self) -> None:
        """Keep the master told whether the Docker engine answers (an agent without one offers nothing)."""
        runner = self.docker_runner
        while True:
            await asyncio.sleep(self.cfg.engine_check_interval)
            ok = await runner.engine_answers()
            if ok:
                await runner.engine_back()  # nothing to do unless removals failed while it was down
            self.core.set_health(ok, "" if ok else "The Docker engine does not answer")

    async def _gc_loop(self) -> None:
        while True:
            await asyncio.sleep(min(60.0, max(1.0, self.cfg.gc_delay / 10)))
            self.core.gc(self.cfg.gc_delay)

    async def stop(self, kill: bool = True) -> None:
        """Disconnect and stop serving; with `kill`, remove every container/process of this agent. Idempotent."""
        for t in (self._gc, self._watch):
            if t:
                t.cancel()
        if self.link:
            await self.link.stop()
        if self.core:
            await self.core.shutdown(kill=kill)
        if self.nested is not None:
            await self.nested.shutdown()
        if self.standalone is not None:
            await self.standalone.shutdown()
        if self._runner:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        if self.docker_runner is not None:
            self.docker_runner.close()
