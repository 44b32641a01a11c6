"""`cluster init`, `join`, `token` and `leave`: a cluster on separate machines (the thin shell).

`init` on the first machine makes its Docker engine a swarm manager, creates
the cluster's credentials, starts the services asked for (ZooKeeper, HDFS:
containers on the machine's own network, restarted by the engine), the
master(s) and an agent, each supervised (supervisor.py), and mints a join
token (join_token.py). `join` on another machine checks the token against
the master before it changes anything, joins the swarm as a worker and
starts a supervised agent that offers what the machine has
(machine_facts.py). `leave` drains the machine's agent (no new offers; its
tasks are killed, so their frameworks hear and restart them elsewhere),
stops it, tells the master it is gone, leaves the swarm and removes what
init/join made. Every step is recorded before it is taken (member_state.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from scylla_singa.common.home import home_path
from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import (AGENT_CREDENTIAL_FILE, CREDENTIALS_FILE, FRAMEWORK_CREDENTIAL_FILE,
                                                Credential, CredentialsError, credential_json,
                                                ensure_master_credentials, load_credential, write_private)
from scylla_singa.swarm.overlays import (SwarmError, default_advertise_address, ensure_job_isolation, ensure_swarm,
                                         host_addresses)
from . import master_client, member_guard, services, supervisor
from .config import AGENT_PORT, MASTER_PORT
from .join_token import JoinToken, JoinTokenError, decode, encode, new_token_id
from .machine_facts import measure, offered_resources
from .member_state import FIRST, MEMBER, MemberState, load_member, machine_dir
from .resource_plan import HDFS_UID, ZK_UID

Echo = Callable[[str], None]
MASTER_PORT_STEP = 10          # masters of one machine: 5050, 5060, 5070
DEFAULT_TOKEN_TTL_S = 24 * 3600.0
SERVICE_IMAGES = {"zookeeper": "scylla-zookeeper:latest", "hdfs": "scylla-hdfs:latest"}
# The ports of the services, which have no authentication: member_guard keeps them to the cluster's machines.
SERVICE_PORTS = {"zookeeper": (2181,), "hdfs": (8020, 9870, 9864, 9866, 9867)}
SERVICE_LABEL = "machine"      # the services' scylla.cluster label on a member's engine
DRAIN_TIMEOUT_S = 300.0
JOB_IMAGES = ("singa:latest", "singa-py:latest")   # what jobs run on: built on each machine, no registry
GWBRIDGE = "docker_gwbridge"   # the bridge an engine makes when it enters a swarm


class MembershipError(RuntimeError):
    """init, join, token or leave cannot go on; the message says what, where and how to fix it."""


@dataclass(frozen=True)
class AgentOptions:
    """How this machine's agent is set up (init and join share them)."""

    resources: str | None = None      # None: measured
    net_bw_mbps: int | None = None    # None: the link speed, when the kernel reports one
    attributes: str | None = None     # added to host:<hostname>
    supervisor: str = "auto"          # auto | systemd | process


@dataclass(frozen=True)
class InitOptions:
    cluster: str = "scylla"
    zk: bool = False
    hdfs: bool = False
    masters: int = 1
    advertise: str | None = None
    agent: bool = True
    token_ttl_s: float = DEFAULT_TOKEN_TTL_S
    agent_options: AgentOptions = AgentOptions()


# -- helpers ------------------------------------------------------------------
def _engine() -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=300)
        client.ping()
        return client
    except docker.errors.DockerException as exc:
        raise MembershipError(f"this machine's Docker engine does not answer ({exc.__class__.__name__}); run the "
                              "README's setup command on it first (or set DOCKER_HOST)") from None


def _use_systemd(choice: str) -> bool:
    if choice == "systemd" and not supervisor.has_systemd():
        raise MembershipError("--supervisor systemd: this machine was not booted by systemd "
                              f"({supervisor.SYSTEMD_RUN_DIR} is missing); use --supervisor process")
    return choice == "systemd" or (choice == "auto" and supervisor.has_systemd())


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "scylla_singa", *args]


def _address(given: str | None) -> str:
    """This machine's cluster address: the one given (it must be this machine's), else the default route's."""
    mine = host_addresses()
    if given is not None:
        if given not in mine:
            raise MembershipError(f"--advertise-addr {given} is not an address of this machine (it has "
                                  f"{', '.join(sorted(mine)) or 'none'})")
        return given
    try:
        return default_advertise_address()
    except SwarmError as exc:
        raise MembershipError(str(exc)) from None


def _refuse_if_member() -> None:
    try:
        state = load_member()
    except ValueError as exc:
        raise MembershipError(str(exc)) from None
    if state is not None:
        raise MembershipError(f"this machine is already {'the first machine' if state.role == FIRST else 'a member'}"
                              f" of cluster {state.cluster!r} ({state.status}; recorded in {state.path}); "
                              "`scylla-singa cluster status` shows it, `scylla-singa cluster leave` undoes it")


def _http(state: MemberState, cred: Credential, method: str, path: str, **kw: Any) -> requests.Response:
    """A call to the leading master (master_client), as a MembershipError when none answers."""
    try:
        return master_client.call(state.masters, cred, method, path, **kw)
    except master_client.MasterUnreachable as exc:
        raise MembershipError(str(exc)) from None


def _credential(state: MemberState, name: str) -> Credential:
    try:
        return load_credential(Path(state.secrets_dir or "") / name)
    except CredentialsError as exc:
        raise MembershipError(str(exc)) from None


def _agents(state: MemberState) -> list[dict[str, Any]]:
    got = _http(state, _credential(state, AGENT_CREDENTIAL_FILE), "GET", "/master/slaves")
    if got.status_code != 200:
        raise MembershipError(f"the master answered {got.status_code} to /master/slaves: {got.text[:200]}")
    return list(got.json().get("slaves", []))


def _agent_address(agent: dict[str, Any]) -> str:
    """The address in an agent's pid ("slave(1)@10.0.0.2:5051")."""
    return str(agent.get("pid", "")).rpartition("@")[2].rpartition(":")[0]


def _our_agent(state: MemberState) -> dict[str, Any] | None:
    live = [a for a in _agents(state) if _agent_address(a) == state.address and a.get("active", True)]
    return live[-1] if live else None


# -- init -----------------------------------------------------------------------
def init(opts: InitOptions, echo: Echo = print) -> tuple[MemberState, str]:
    """Make this machine the cluster's first; returns its state and the join line to print."""
    _refuse_if_member()
    if opts.masters < 1 or opts.masters > 5:
        raise MembershipError(f"--masters must be between 1 and 5, not {opts.masters}")
    if opts.masters > 1 and not opts.zk:
        raise MembershipError(f"--masters {opts.masters} needs --zk: standby masters elect a leader through ZooKeeper")
    use_systemd = _use_systemd(opts.agent_options.supervisor)
    client = _engine()
    for wanted, name in ((opts.zk, "zookeeper"), (opts.hdfs, "hdfs")):
        if wanted:
            try:
                client.images.get(SERVICE_IMAGES[name])
            except docker.errors.ImageNotFound:
                raise MembershipError(f"image {SERVICE_IMAGES[name]} is missing on this machine: run "
                                      f"`scylla-singa images build {name}` (the README's setup command does)") from None
    address = _address(opts.advertise)
    state = MemberState(FIRST, opts.cluster, address)
    state.save()
    step = "the swarm"
    try:
        _init_swarm(state, client)
        step = "the credentials"
        secrets = machine_dir() / "secrets"
        state.secrets_dir = str(secrets)
        state.save()
        ensure_master_credentials(secrets)
        wanted = [name for asked, name in ((opts.zk, "zookeeper"), (opts.hdfs, "hdfs")) if asked]
        if wanted:
            step = "the guard of the services' ports"
            _guard(state, [p for name in wanted for p in SERVICE_PORTS[name]], use_systemd)
        for name in wanted:
            step = name
            _start_service(state, client, name)
        state.zk_hosts = f"{address}:2181" if opts.zk else None
        state.webhdfs = f"http://{address}:9870" if opts.hdfs else None
        for i in range(1, opts.masters + 1):
            step = f"master {i}"
            _start_master(state, i, use_systemd, echo)
        state.master = f"zk://{state.zk_hosts}/mesos" if opts.zk else state.masters[0]
        state.save()
        if opts.agent:
            step = "the agent"
            _start_agent(state, opts.agent_options, use_systemd, echo)
        step = "the join token"
        line = join_line(state, client, opts.token_ttl_s)
        state.status = "member"
        state.save()
    except (MembershipError, supervisor.SupervisorError, services.ServiceError, SwarmError, CredentialsError,
            member_guard.GuardError, docker.errors.DockerException, TimeoutError, OSError) as exc:
        echo(f"cluster init failed at {step}: {exc}\nundoing what was made")
        leave(force=True, echo=echo)
        raise MembershipError(f"cluster init failed at {step}: {exc}") from None
    return state, line


def _init_swarm(state: MemberState, client: docker.DockerClient) -> None:
    sw = client.info().get("Swarm", {})
    if sw.get("LocalNodeState") == "active":
        if not sw.get("ControlAvailable") or sw.get("NodeAddr") != state.address:
            raise MembershipError(f"this machine's Docker engine is already in a swarm (node address "
                                  f"{sw.get('NodeAddr')}, {'manager' if sw.get('ControlAvailable') else 'worker'}); "
                                  "`docker swarm leave` first, or run init on a machine outside any swarm")
        state.swarm = "kept"
    else:
        state.swarm = "initialised"
        state.save()
        ensure_swarm(client, state.address)
    state.save()


def _guard(state: MemberState, ports: list[int], use_systemd: bool) -> None:
    """Close the ports to all but this machine before the services open them, then let `cluster guard`
    open them to each machine that joins the swarm."""
    state.guarded_ports = ports
    state.save()
    member_guard.install(ports, set(host_addresses()))
    _supervise(state, "guard", _cli("cluster", "guard", "--ports", ",".join(map(str, ports))), use_systemd)


def _start_service(state: MemberState, client: docker.DockerClient, name: str) -> None:
    container = f"scylla-{name}"
    state.services.append(container)
    state.save()
    env = {"HDFS_ADVERTISE": state.address, "HDFS_REPLICATION": "1"} if name == "hdfs" else {}
    services.start(client, container, SERVICE_IMAGES[name], services.HOST_NETWORK, state.address, SERVICE_LABEL, env,
                   str(machine_dir() / "services" / name), HDFS_UID if name == "hdfs" else ZK_UID, restart=True)
    services.wait_healthy(client, container, timeout_s=180)


def _start_master(state: MemberState, number: int, use_systemd: bool, echo: Echo) -> None:
    port = MASTER_PORT + MASTER_PORT_STEP * (number - 1)
    name = f"master-{number}"
    secrets = Path(state.secrets_dir or "")
    argv = _cli("master", "--host", state.address, "--advertise-ip", state.address, "--port", str(port),
                "--work-dir", str(machine_dir() / "masters" / name), "--credentials", str(secrets / CREDENTIALS_FILE))
    if state.zk_hosts:
        argv += ["--zk", f"zk://{state.zk_hosts}/mesos"]
    _supervise(state, name, argv, use_systemd)
    endpoint = f"{state.address}:{port}"
    state.masters.append(endpoint)
    state.save()
    _wait_answers(f"http://{endpoint}/health", name, state)
    echo(f"  {name} serving on {endpoint}")


def _supervise(state: MemberState, name: str, argv: list[str], use_systemd: bool) -> None:
    env = {"SCYLLA_HOME": str(home_path())}
    if os.environ.get("DOCKER_HOST"):
        env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
    record = supervisor.start(name, argv, env, machine_dir() / "run", use_systemd)
    state.supervised.append(record)
    state.save()


def _wait_answers(url: str, what: str, state: MemberState, timeout_s: float = 60) -> None:
    def answers() -> bool:
        try:
            return requests.get(url, timeout=2).status_code == 200
        except requests.RequestException:
            return False
    try:
        wait_until(answers, timeout_s, f"{what} at {url}")
    except TimeoutError as exc:
        record = state.supervised_named(what)
        raise MembershipError(f"{exc}; its log: {record.log if record and record.log else 'journalctl -u ' + what}") \
            from None


def _start_agent(state: MemberState, opts: AgentOptions, use_systemd: bool, echo: Echo) -> None:
    work = machine_dir() / "agent"
    facts = measure(work, state.address)
    resources = opts.resources or offered_resources(facts, opts.net_bw_mbps)
    attributes = f"host:{facts.hostname}" + (f";{opts.attributes}" if opts.attributes else "")
    secrets = Path(state.secrets_dir or "")
    argv = _cli("agent", "--master", state.master or state.masters[0], "--host", state.address, "--advertise-ip",
                state.address, "--port", str(AGENT_PORT), "--hostname", facts.hostname, "--resources", resources,
                "--attributes", attributes, "--work-dir", str(work),
                "--docker-host", os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
                "--credential", str(secrets / AGENT_CREDENTIAL_FILE),
                "--http-credentials", str(secrets / CREDENTIALS_FILE))
    if state.webhdfs:
        argv += ["--hdfs", state.webhdfs]
    state.agent_hostname = facts.hostname
    _supervise(state, "agent", argv, use_systemd)
    _wait_answers(f"http://{state.address}:{AGENT_PORT}/health", "agent", state)
    try:
        wait_until(lambda: _our_agent(state) is not None, 60, "the agent to register with the master")
    except TimeoutError as exc:
        record = state.supervised_named("agent")
        raise MembershipError(f"{exc}; its log: {record.log if record else '?'}") from None
    echo(f"  agent {facts.hostname} offers {resources}")


# -- tokens ---------------------------------------------------------------------
def join_line(state: MemberState, client: docker.DockerClient | None = None, ttl_s: float = DEFAULT_TOKEN_TTL_S,
              rotate: bool = False) -> str:
    """A new join token of the first machine's cluster, as the command a joining machine runs."""
    if state.role != FIRST:
        raise MembershipError("join tokens are made on the cluster's first machine (where `cluster init` ran)")
    if not 60 <= ttl_s <= 30 * 24 * 3600:
        raise MembershipError(f"--ttl must be between 1 minute and 30 days, not {ttl_s:g} s")
    client = client or _engine()
    if rotate:  # tokens made before no longer join the swarm
        client.swarm.reload()
        client.swarm.update(rotate_worker_token=True)
    client.swarm.reload()
    worker_token = client.swarm.attrs["JoinTokens"]["Worker"]
    token = JoinToken(token_id=new_token_id(), cluster=state.cluster, master=state.master or state.masters[0],
                      swarm_manager=f"{state.address}:2377", swarm_token=worker_token,
                      agent=_credential(state, AGENT_CREDENTIAL_FILE),
                      framework=_credential(state, FRAMEWORK_CREDENTIAL_FILE),
                      expires_at=time.time() + ttl_s, webhdfs=state.webhdfs, zk_hosts=state.zk_hosts)
    state.tokens.append({"id": token.token_id, "expires_at": token.expires_at, "rotated_swarm": rotate})
    state.save()
    return f"scylla-singa cluster join --token {encode(token)} {state.masters[0]}"


# -- join -------------------------------------------------------------------------
def read_token(text: str) -> JoinToken:
    try:
        return decode(text, time.time())
    except JoinTokenError as exc:
        raise MembershipError(str(exc)) from None


def check_token(token: JoinToken, first: str) -> None:
    """Ask the first machine's master whether it takes the token's agent credential (before any change)."""
    try:
        got = master_client.call([first], token.agent, "GET", "/master/slaves")
    except master_client.MasterUnreachable as exc:
        raise MembershipError(f"cannot reach the first machine's master at {first} ({exc}); check the address "
                              f"and that port {first.rpartition(':')[2]} is open to this machine") from None
    if got.status_code == 401:
        raise MembershipError(f"the master at {first} refused the token's credential: the token is of another "
                              "cluster, or the cluster was made anew; make a new token on the first machine with "
                              "`scylla-singa cluster token`")
    if got.status_code != 200:
        raise MembershipError(f"the master at {first} answered {got.status_code}: {got.text[:200]}")


def join(token: JoinToken, first: str, advertise: str | None, agent_options: AgentOptions,
         echo: Echo = print) -> MemberState:
    """Make this machine a member of the token's cluster, whose first master is at `first` ("host[:port]")."""
    _refuse_if_member()
    if ":" not in first:
        first = f"{first}:{MASTER_PORT}"
    use_systemd = _use_systemd(agent_options.supervisor)
    check_token(token, first)
    client = _engine()
    missing = [tag for tag in JOB_IMAGES if not client.images.list(name=tag)]
    if missing:
        echo(f"note: this machine's engine has no {', '.join(missing)}: processes of jobs on those images that "
             "are placed here will fail to start; build them first (the README's setup command)")
    address = advertise or _route_source(first.rpartition(":")[0])
    address = _address(address)
    state = MemberState(MEMBER, token.cluster, address, master=token.master, masters=[first],
                        webhdfs=token.webhdfs, zk_hosts=token.zk_hosts, token_id=token.token_id)
    state.save()
    step = "the swarm"
    try:
        _join_swarm(state, client, token)
        step = "the credentials"
        _write_member_secrets(state, token)
        step = "the agent"
        _start_agent(state, agent_options, use_systemd, echo)
        state.status = "member"
        state.save()
    except (MembershipError, supervisor.SupervisorError, SwarmError, docker.errors.DockerException, TimeoutError,
            OSError) as exc:
        echo(f"cluster join failed at {step}: {exc}\nundoing what was made")
        leave(force=True, echo=echo)
        raise MembershipError(f"cluster join failed at {step}: {exc}") from None
    return state


def _route_source(host: str) -> str | None:
    """The source address this machine uses to reach `host` (its address on that network)."""
    try:
        out = subprocess.run(["ip", "-j", "route", "get", host], capture_output=True, text=True, timeout=10).stdout
        routes = json.loads(out or "[]")
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    return routes[0].get("prefsrc") if routes else None


def _join_swarm(state: MemberState, client: docker.DockerClient, token: JoinToken) -> None:
    sw = client.info().get("Swarm", {})
    if sw.get("LocalNodeState") == "active":
        managers = {m.get("Addr") for m in sw.get("RemoteManagers") or []}
        if sw.get("ControlAvailable") or token.swarm_manager not in managers:
            raise MembershipError("this machine's Docker engine is already in another swarm "
                                  f"(node address {sw.get('NodeAddr')}); `docker swarm leave` first")
        state.swarm = "kept"
    else:
        state.swarm = "joined"
        state.save()
        try:
            client.swarm.join(remote_addrs=[token.swarm_manager], join_token=token.swarm_token,
                              listen_addr=f"{state.address}:2377", advertise_addr=state.address,
                              data_path_addr=state.address)
        except docker.errors.APIError as exc:
            state.swarm = None
            state.save()
            raise MembershipError(f"the swarm manager at {token.swarm_manager} refused this machine: "
                                  f"{exc.explanation}; if `cluster token --rotate` ran after this token was made, "
                                  "make a new one") from None
    state.save()
    ensure_job_isolation()


def _write_member_secrets(state: MemberState, token: JoinToken) -> None:
    """The agent's credential, the framework's, and who may call the agent (both), all 0600."""
    secrets = machine_dir() / "secrets"
    state.secrets_dir = str(secrets)
    state.save()
    secrets.mkdir(parents=True, exist_ok=True)
    os.chmod(secrets, 0o700)
    files = {AGENT_CREDENTIAL_FILE: credential_json(token.agent),
             FRAMEWORK_CREDENTIAL_FILE: credential_json(token.framework),
             CREDENTIALS_FILE: _credentials_json([token.framework, token.agent])}
    for name, text in files.items():
        (secrets / name).unlink(missing_ok=True)
        write_private(secrets / name, text)


def _credentials_json(creds: list[Credential]) -> str:
    return json.dumps({"credentials": [{"principal": c.principal, "secret": c.secret} for c in creds]}, indent=1) + "\n"


# -- leave ------------------------------------------------------------------------
def leave(force: bool = False, keep_data: bool = False, drain_timeout_s: float = DRAIN_TIMEOUT_S,
          echo: Echo = print) -> list[str]:
    """Undo init/join on this machine; returns the problems met (each echoed). Idempotent with --force."""
    try:
        state = load_member()
    except ValueError as exc:
        raise MembershipError(str(exc)) from None
    if state is None:
        raise MembershipError("this machine is not a member of a cluster (no record of `cluster init` or "
                              "`cluster join` in $SCYLLA_HOME/machine)")
    problems: list[str] = []
    if state.role == FIRST and state.status == "member" and not force:
        others = [a for a in _agents(state) if a.get("active", True) and _agent_address(a) != state.address]
        if others:
            names = ", ".join(f"{a.get('hostname')} ({_agent_address(a)})" for a in others)
            raise MembershipError(f"{len(others)} other machine(s) are still members: {names}; run "
                                  "`scylla-singa cluster leave` on each first, or --force to stop the cluster "
                                  "under them")
    state.status = "leaving"
    state.save()
    agent = state.supervised_named("agent")
    if agent is not None:
        problems += _drain_and_stop_agent(state, agent, drain_timeout_s, echo)
    for record in reversed(state.supervised):
        if record is agent:
            continue
        try:
            supervisor.stop(record)
            echo(f"  stopped {record.name}")
        except (supervisor.SupervisorError, TimeoutError, OSError) as exc:
            problems.append(f"{record.name}: {exc}")
    problems += _remove_services(state)
    if state.guarded_ports:
        try:
            member_guard.remove(state.guarded_ports)
        except (member_guard.GuardError, OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"guard: {exc}")
    problems += _leave_swarm(state, echo)
    if not keep_data:
        shutil.rmtree(machine_dir(), ignore_errors=True)
    else:
        state.path.unlink(missing_ok=True)
    for p in problems:
        echo(f"  problem: {p}")
    return problems


def _drain_and_stop_agent(state: MemberState, agent: supervisor.Supervised, timeout_s: float,
                          echo: Echo) -> list[str]:
    """DRAIN_AGENT (no new offers; its tasks are killed and their frameworks told), wait until no task is
    left, stop the agent, then MARK_AGENT_GONE so the master forgets it at once."""
    problems: list[str] = []
    try:
        ours = _our_agent(state)
    except MembershipError as exc:
        ours = None
        problems.append(f"drain: {exc} (the agent is stopped without draining)")
    cred = _credential(state, AGENT_CREDENTIAL_FILE) if ours is not None else None
    if ours is not None and cred is not None:
        agent_id = ours["id"]
        got = _http(state, cred, "POST", "/api/v1",
                    json={"type": "DRAIN_AGENT", "drain_agent": {"agent_id": {"value": agent_id}}})
        if got.status_code not in (200, 202):
            problems.append(f"DRAIN_AGENT answered {got.status_code}: {got.text[:200]}")
        echo(f"  draining agent {ours.get('hostname')} ({agent_id}): no new offers, its tasks are killed")
        try:
            wait_until(lambda: _tasks_on(state, agent_id) == 0, timeout_s, f"agent {agent_id}'s tasks to end")
        except TimeoutError as exc:
            problems.append(f"drain: {exc}; stopping it anyway")
    supervisor.stop(agent)
    echo("  stopped agent")
    if ours is not None and cred is not None:
        got = _http(state, cred, "POST", "/api/v1",
                    json={"type": "MARK_AGENT_GONE", "mark_agent_gone": {"agent_id": {"value": ours["id"]}}})
        if got.status_code not in (200, 202):
            problems.append(f"MARK_AGENT_GONE answered {got.status_code}: {got.text[:200]}")
    return problems


def _tasks_on(state: MemberState, agent_id: str) -> int:
    got = _http(state, _credential(state, AGENT_CREDENTIAL_FILE), "GET", "/master/tasks")
    live = {"TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING"}
    return sum(1 for t in got.json().get("tasks", []) if t.get("slave_id") == agent_id and t.get("state") in live)


def _remove_services(state: MemberState) -> list[str]:
    if not state.services:
        return []
    try:
        client = _engine()
    except MembershipError as exc:
        return [f"services {', '.join(state.services)}: {exc}"]
    for name in state.services:
        services.remove(client, name)
    return []


def _leave_swarm(state: MemberState, echo: Echo) -> list[str]:
    if state.swarm not in ("joined", "initialised"):
        return []
    try:
        client = _engine()
        if client.info().get("Swarm", {}).get("LocalNodeState") != "inactive":
            client.swarm.leave(force=state.swarm == "initialised")
        echo("  left the swarm")
        for net in client.networks.list(names=[GWBRIDGE]):  # the engine made it for the swarm; left unused
            if net.name == GWBRIDGE and not net.attrs.get("Containers"):
                net.remove()
    except (MembershipError, docker.errors.APIError) as exc:
        return [f"swarm leave: {exc}"]
    return []
