"""`scylla-singa master` and `scylla-singa agent`.

The master command composes a master with the web UI (scylla_singa.ui.master_page):
the page and Prometheus /metrics on the master's port.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import click

from scylla_singa.mesos.api import event_loop
from scylla_singa.mesos.api.collector_pacing import DEFAULT_INTERVAL_S
from scylla_singa.mesos.master.allocator import known_allocators
from .param_types import Duration


def _home(sub: str) -> Path:
    from scylla_singa.common.home import scylla_home
    return scylla_home() / sub


def _weights(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        role, sep, w = part.partition("=")
        try:
            out[role.strip()] = float(w)
        except ValueError:
            raise click.BadParameter(f"bad role weight {part!r}: use ROLE=WEIGHT") from None
    return out


async def _serve(start, stop) -> None:
    """Run until SIGINT/SIGTERM."""
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, done.set)
    await start()
    await done.wait()
    await stop()


# master and agent: the same option, one text (mesos/api/collector_pacing.py says why)
_full_collection_interval = click.option(
    "--full-collection-interval", default=DEFAULT_INTERVAL_S, show_default=True, type=click.FloatRange(min=0),
    metavar="SECONDS", help="Run Python's full garbage collection every SECONDS instead of whenever enough "
    "objects survived, and collect only the youngest objects in between; 0 for CPython's own rule. With tens "
    "of thousands of agents each full collection is a pause of a second or more, which CPython's rule starts "
    "every few seconds.")


@click.command()
@click.option("--host", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option("--advertise-ip", default=None, help="Address others reach this master at (default: --host, or the default route's address when --host is 0.0.0.0).")
@click.option("--port", default=5050, show_default=True, type=int, help="Port (0 picks a free one).")
@click.option("--work-dir", type=click.Path(path_type=Path), default=None, help="Where the master keeps its registered frameworks [default: $SCYLLA_HOME/master].")
@click.option("--allocator", type=click.Choice(list(known_allocators())), default="drf", show_default=True, help="Allocation module: hierarchical DRF, or FIFO (registration order).")
@click.option("--allocation-interval", default="1s", show_default=True, type=Duration(), help="Time between allocation rounds (e.g. 1s, 500ms).")
@click.option("--offer-timeout", default="none", show_default=True, type=Duration(allow_none=True), help="Rescind offers unused for this long (none: never).")
@click.option("--heartbeat-interval", default="15s", show_default=True, type=Duration(), help="HEARTBEAT events to frameworks every ...")
@click.option("--agent-ping-timeout", default="15s", show_default=True, type=Duration(), help="Interval of the master's pings to agents.")
@click.option("--max-agent-ping-timeouts", default=5, show_default=True, type=click.IntRange(min=1), help="An agent silent for this many ping intervals is unreachable: removed, its tasks LOST.")
@click.option("--agent-reregister-timeout", default="75s", show_default=True, type=Duration(), help="A disconnected agent is removed (its tasks LOST) after ...; also how long a new leader waits for agents of the former one.")
@click.option("--credentials", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None, help="Who may call this master (frameworks, agents, operators; HTTP Basic): JSON {\"credentials\": [{principal, secret}]} or 'principal secret' lines. Default: the master makes its own in --work-dir on first start (credentials.json, and framework.credential and agent.credential to hand out).")
@click.option("--insecure", is_flag=True, help="Let anyone call every endpoint without credentials (a trusted private network only; never on a public address).")
@click.option("--authenticate-http-readonly/--no-authenticate-http-readonly", default=True, show_default=True, help="Also ask credentials for the read-only endpoints (/master/state, /metrics/snapshot, the web UI), as Mesos's --authenticate_http_readonly.")
@click.option("--acls", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None, help="Authorization rules (YAML or JSON): which principals may register frameworks in which roles, run tasks as which users, tear down which frameworks, register agents. See README, Security.")
@click.option("--max-frameworks-per-principal", default=100, show_default=True, type=click.IntRange(min=1), help="Live frameworks one principal (or, on an --insecure master, one source address) may keep registered; more are refused with 429.")
@click.option("--unused-framework-timeout", default="60s", show_default=True, type=Duration(), help="A framework whose stream ends before it ever launched a task is forgotten after this long, whatever failover timeout it asked for.")
@click.option("--header-read-timeout", default="5s", show_default=True, type=Duration(), help="A client must send a request's line and headers within this long, or the connection is closed.")
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Serve HTTPS (and agents' links as wss) with this PEM certificate (with its chain); needs --tls-key. pymesos frameworks then connect through a local TLS proxy (README, Security).")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), default=None, help="The PEM private key of --tls-cert.")
@click.option("--role-weights", default="", help="DRF weights of roles, e.g. 'prod=3,dev=1'.")
@_full_collection_interval
@click.option("--zk", default=None, help="zk://host:2181/mesos: elect a leader among masters and publish it where frameworks look.")
@click.option("-v", "--verbose", is_flag=True, help="Log at debug level.")
def master(host, advertise_ip, port, work_dir, allocator, allocation_interval, offer_timeout, heartbeat_interval,
           agent_ping_timeout, max_agent_ping_timeouts, agent_reregister_timeout, credentials, insecure,
           authenticate_http_readonly, acls, max_frameworks_per_principal, unused_framework_timeout,
           header_read_timeout, tls_cert, tls_key, role_weights, full_collection_interval, zk, verbose) -> None:
    """Run a Mesos-compatible master: the v1 scheduler API at /api/v1/scheduler
    (pymesos and other Mesos 1.x frameworks work unchanged), resource offers by
    DRF, and the operator endpoints /master/state, /metrics/snapshot, /health."""
    from scylla_singa.mesos.api.credentials import CredentialsError, ensure_master_credentials, load_credentials
    from scylla_singa.mesos.master.acls import AclError, load_acls
    from scylla_singa.mesos.master.election import StandaloneElector, ZooKeeperElector
    from scylla_singa.mesos.master.master_http import MasterServer
    from scylla_singa.mesos.master.master_records import MasterConfig
    from scylla_singa.ui import master_page
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if insecure and credentials:
        raise click.UsageError("--insecure and --credentials contradict each other: give one")
    tls = _server_tls(tls_cert, tls_key)
    work_dir = work_dir or _home("master")
    try:
        if insecure:
            creds = None
        elif credentials:
            creds = load_credentials(credentials)
        else:
            creds, made = ensure_master_credentials(work_dir)
            click.echo(f"credentials: {made} (frameworks and operators: {made.parent}/framework.credential, "
                       f"agents: {made.parent}/agent.credential)", err=True)
        rules = load_acls(acls) if acls else None
    except (CredentialsError, AclError) as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"cannot make the master's credentials in {work_dir}: {exc.strerror}; "
                                   "pick another --work-dir or give --credentials FILE") from None
    if insecure:
        click.echo("warning: --insecure: anyone who reaches this master may register frameworks and agents and "
                   "run tasks", err=True)
    if host == "0.0.0.0" and not advertise_ip:
        from scylla_singa.swarm.overlays import default_advertise_address
        advertise_ip = default_advertise_address()
    cfg = MasterConfig(host=host, port=port, advertise_host=advertise_ip, work_dir=work_dir,
                       allocator=allocator, allocation_interval=allocation_interval, offer_timeout=offer_timeout,
                       heartbeat_interval=heartbeat_interval, agent_ping_interval=agent_ping_timeout,
                       agent_ping_misses=max_agent_ping_timeouts, agent_reregister_timeout=agent_reregister_timeout,
                       credentials=creds, authenticate_readonly=authenticate_http_readonly, acls=rules, tls=tls,
                       max_frameworks_per_principal=max_frameworks_per_principal,
                       unused_framework_timeout=unused_framework_timeout, header_read_timeout=header_read_timeout,
                       role_weights=_weights(role_weights))
    cfg.work_dir.mkdir(parents=True, exist_ok=True)
    server = MasterServer(cfg, ZooKeeperElector(zk) if zk else StandaloneElector(),
                          extra_routes=[master_page.routes])
    lost: list[bool] = []

    def lost_leadership() -> None:  # as Mesos's master does: exit, to be restarted as a standby
        lost.append(True)
        os.kill(os.getpid(), signal.SIGTERM)
    server.on_lost_leadership = lost_leadership

    async def start() -> None:
        await server.start()
        click.echo(f"master listening on {'https://' if tls else ''}{server.address} (allocator {allocator})",
                   err=True)
    event_loop.run(_serve(start, server.stop), full_collection_interval)
    if lost:
        click.echo("master lost leadership; exiting (restart it to stand by)", err=True)
        sys.exit(1)


AGENT_LOCK_FILE = "agent.lock"
_agent_lock: list[object] = []  # the held lock, for the process's life


def _hold_agent_work_dir(work_dir: Path) -> None:
    """Refuse to run on a work dir another live agent holds.

    The work dir holds the agent's id and its tasks' checkpoints: a second
    agent on it would recover the first one's id and take over its identity
    (the master would see one agent re-register and the first go inactive).
    The flock is dropped by the kernel when the agent dies, so a crashed
    agent's successor is never refused.
    """
    from scylla_singa.common.pid_lock import LockHeld, PidLock
    try:
        work_dir.mkdir(parents=True, exist_ok=True)
        _agent_lock.append(PidLock(work_dir / AGENT_LOCK_FILE).acquire())
    except LockHeld as exc:
        raise click.ClickException(
            f"another agent (pid {exc.holder}) is running on work dir {work_dir}; two agents on one work dir "
            f"would share one agent id. Give this one its own with --work-dir DIR (and a free --port)") from None
    except OSError as exc:
        raise click.ClickException(f"cannot use work dir {work_dir}: {exc.strerror}; pick another with "
                                   f"--work-dir DIR") from None


def _server_tls(cert: Path | None, key: Path | None):
    """The SSLContext of --tls-cert/--tls-key (both or neither); a clear error for a bad pair."""
    from scylla_singa.mesos.api.tls import TlsError, server_context
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise click.UsageError("--tls-cert and --tls-key go together: give both")
    try:
        return server_context(cert, key)
    except TlsError as exc:
        raise click.ClickException(str(exc)) from None


def _agent_credentials(credential_file: Path | None, http_credentials: Path | None, insecure: bool):
    """(the agent's Credential, who may call its endpoints): from the flags, else the files a master on this
    machine with its default work dir made; neither and not --insecure: a clear refusal."""
    from scylla_singa.mesos.api.credentials import (AGENT_CREDENTIAL_FILE, CREDENTIALS_FILE, CredentialsError,
                                                    load_credential, load_credentials)
    if insecure:
        if credential_file or http_credentials:
            raise click.UsageError("--insecure contradicts --credential/--http-credentials: give one")
        click.echo("warning: --insecure: this agent's endpoints answer anyone", err=True)
        return None, None
    local = _home("master")
    own = credential_file or (local / AGENT_CREDENTIAL_FILE)
    callers = http_credentials or (local / CREDENTIALS_FILE)
    try:
        credential = load_credential(own) if credential_file or _readable(own) else None
        accepted = load_credentials(callers) if http_credentials or _readable(callers) else None
    except CredentialsError as exc:
        raise click.ClickException(str(exc)) from None
    if credential is None:
        raise click.UsageError(
            "this agent has no credential to register with: give --credential FILE (the master makes "
            "agent.credential in its work dir on first start; copy it here, mode 0600), or --insecure "
            "for a master started with --insecure")
    return credential, accepted


def _readable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.R_OK)


@click.command()
@click.option("--master", "master_addr", required=True, help="HOST:PORT of the master, or zk://host:2181/mesos.")
@click.option("--host", default="0.0.0.0", show_default=True, help="Address the agent's HTTP endpoints listen on.")
@click.option("--advertise-ip", default=None, help="Address the master and frameworks reach this agent at.")
@click.option("--hostname", default=None, help="Hostname reported in offers [default: this machine's].")
@click.option("--port", default=5051, show_default=True, type=int, help="HTTP port (0 picks a free one).")
@click.option("--resources", default=None, help="e.g. 'cpus:4;mem:8192;disk:10240;ports:[31000-32000];net_bw:1000' (missing ones: what the machine has).")
@click.option("--attributes", default=None, help="e.g. 'rack:r1;zone:a' (text or numbers; passed through offers).")
@click.option("--docker-host", default=None, help="Docker engine URL [default: DOCKER_HOST or /var/run/docker.sock].")
@click.option("--no-docker", is_flag=True, help="Run only command tasks (no Docker engine).")
@click.option("--work-dir", type=click.Path(path_type=Path), default=None, help="Sandboxes and recovery state [default: $SCYLLA_HOME/agent].")
@click.option("--allowed-host-paths", default=None, help="Colon-separated roots that Docker volumes may mount [default: $SCYLLA_HOME/jobs].")
@click.option("--hdfs", default=None, help="WebHDFS URL (http://namenode:9870) used to fetch hdfs:// URIs.")
@click.option("--gc-delay", default="7d", show_default=True, type=Duration(), help="Keep a finished task's sandbox this long.")
@click.option("--credential", "credential_file", type=click.Path(dir_okay=False, path_type=Path), default=None, envvar="SCYLLA_AGENT_CREDENTIAL", help="How this agent proves itself to the master: a file with one principal and its secret (JSON {principal, secret} or 'principal secret'), e.g. the master's agent.credential [env: SCYLLA_AGENT_CREDENTIAL; default: $SCYLLA_HOME/master/agent.credential when readable].")
@click.option("--http-credentials", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Who may call this agent's endpoints (/state, /files/*, the operator API): a credentials file like the master's [default: $SCYLLA_HOME/master/credentials.json when readable; the agent's own credential is always accepted].")
@click.option("--insecure", is_flag=True, help="Register without a credential and let anyone call this agent's endpoints (a trusted private network only).")
@click.option("--authenticate-http-executors/--no-authenticate-http-executors", default=True, show_default=True, help="Executors' calls to /api/v1/executor must carry their own token (MESOS_EXECUTOR_AUTHENTICATION_TOKEN, as Mesos's flag of that name); off for executors built on libraries that do not send it (mesos-go v0.0.11's).")
@click.option("--allow-root-tasks", is_flag=True, help="Let tasks run as uid 0 (a process task's CommandInfo/FrameworkInfo user, or a container whose image USER is root or unset). Off: such tasks fail, naming the user and this flag.")
@click.option("--fetcher-allowed-roots", default=None, metavar="PATH[:PATH...]", help="Directories the fetcher may copy local files (file:// or bare paths) from, resolved with symlinks; anything else fails the task. http(s) and hdfs URIs are not affected [default: $SCYLLA_HOME/jobs].")
@click.option("--tls-ca", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Verify a TLS master (--master https://HOST:PORT) against this PEM CA or self-signed certificate [default: the system's trust store].")
@click.option("--simulate", is_flag=True, help="Run nothing: 'sleep N' ends after N s, 'exit K' with code K, else runs until killed.")
@click.option("--count", default=1, show_default=True, type=int, help="With --simulate: this many agents on one connection.")
@_full_collection_interval
@click.option("-v", "--verbose", is_flag=True, help="Log at debug level.")
def agent(master_addr, host, advertise_ip, hostname, port, resources, attributes, docker_host, no_docker, work_dir,
          allowed_host_paths, hdfs, gc_delay, credential_file, http_credentials, insecure,
          authenticate_http_executors, allow_root_tasks,
          fetcher_allowed_roots, tls_ca, simulate, count, full_collection_interval, verbose) -> None:
    """Run a Mesos-compatible agent: registers with the master, runs tasks as
    Docker containers (or plain processes without a ContainerInfo), serves
    /state and /files/read for the tasks' sandboxes."""
    from scylla_singa.mesos.agent.agent_server import Agent, AgentConfig
    from scylla_singa.mesos.agent.simulated_fleet import DEFAULT_SIM_RESOURCES, SimulatedFleet
    from scylla_singa.mesos.api.resources import ResourceError, Resources, parse_attributes
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        Resources.parse(resources or "")
        parse_attributes(attributes or "")
    except ResourceError as exc:
        raise click.BadParameter(str(exc)) from None
    if count < 1 or (count > 1 and not simulate):
        raise click.BadParameter("--count needs --simulate and must be at least 1")
    credential, accepted = _agent_credentials(credential_file, http_credentials, insecure)
    from scylla_singa.mesos.api.tls import TlsError, client_context
    try:
        master_tls = client_context(tls_ca) if tls_ca or master_addr.startswith("https://") else None
    except TlsError as exc:
        raise click.ClickException(str(exc)) from None
    if simulate and count > 1:
        fleet = SimulatedFleet(master_addr, count, resources or DEFAULT_SIM_RESOURCES, attributes or "",
                               hostname_prefix=hostname or "sim", credential=credential, tls=master_tls)

        async def start_fleet() -> None:
            await fleet.start()
            click.echo(f"{count} simulated agents connecting to {master_addr}", err=True)
        event_loop.run(_serve(start_fleet, fleet.stop), full_collection_interval)
        return
    if host == "0.0.0.0" and not advertise_ip:
        from scylla_singa.swarm.overlays import default_advertise_address
        advertise_ip = default_advertise_address()
    roots = [Path(p) for p in allowed_host_paths.split(":") if p] if allowed_host_paths else None
    work_dir = work_dir or _home("agent")
    _hold_agent_work_dir(work_dir)
    cfg = AgentConfig(master=master_addr, host=host, port=port, hostname=hostname, advertise_ip=advertise_ip,
                      resources=resources, attributes=attributes, work_dir=work_dir,
                      docker_host=docker_host, use_docker=not no_docker, simulate=simulate, hdfs=hdfs,
                      gc_delay=gc_delay, credential=credential, http_credentials=accepted, master_tls=master_tls,
                      allow_root_tasks=allow_root_tasks, authenticate_executors=authenticate_http_executors)
    if fetcher_allowed_roots:
        cfg.fetcher_allowed_roots = [Path(p) for p in fetcher_allowed_roots.split(":") if p]
    if roots is not None:
        cfg.allowed_host_paths = roots
    node = Agent(cfg)

    async def start() -> None:
        await node.start()
        click.echo(f"agent serving on {node.address}, master {master_addr}", err=True)

    async def stop() -> None:
        await node.stop(kill=False)  # tasks keep running; a restarted agent recovers them
    try:
        event_loop.run(_serve(start, stop), full_collection_interval)
    except OSError as exc:
        click.echo(f"agent failed: {exc}", err=True)
        sys.exit(1)
