"""`cluster init`: make this machine the first of a new cluster, and its join tokens.

The machine's Docker engine becomes the swarm manager; the cluster's
credentials are made; the services asked for (ZooKeeper, HDFS) start as
containers on the machine's own network, restarted by the engine, behind
the guard of their ports (member_guard.py); then the master(s) and an agent,
supervised. A failure undoes what was made (leaving.leave) and says at
which step. `join_line` mints a token (join_token.py) and the command to
run on a joining machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from scylla_singa.mesos.api.credentials import (AGENT_CREDENTIAL_FILE, CREDENTIALS_FILE, FRAMEWORK_CREDENTIAL_FILE,
                                                CredentialsError, ensure_master_credentials)
from scylla_singa.swarm.overlays import SwarmError, ensure_swarm, host_addresses
from . import member_guard, membership, services, supervisor
from .config import MASTER_PORT
from .join_token import JoinToken, encode, new_token_id
from .leaving import leave
from .member_state import FIRST, MemberState, machine_dir
from .membership import AgentOptions, Echo, MembershipError
from .resource_plan import HDFS_UID, ZK_UID
MASTER_PORT_STEP = 10          # masters of one machine: 5050, 5060, 5070
DEFAULT_TOKEN_TTL_S = 24 * 3600.0
SERVICE_IMAGES = {"zookeeper": "scylla-zookeeper:latest", "hdfs": "scylla-hdfs:latest"}
# The ports of the services, which have no authentication: member_guard keeps them to the cluster's machines.
SERVICE_PORTS = {"zookeeper": (2181,), "hdfs": (8020, 9870, 9864, 9866, 9867)}
SERVICE_LABEL = "machine"      # the services' scylla.cluster label on a member's engine


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


def init(opts: InitOptions, echo: Echo = print) -> tuple[MemberState, str]:
    """Make this machine the cluster's first; returns its state and the join line to print."""
    membership.refuse_if_member()
    if opts.masters < 1 or opts.masters > 5:
        raise MembershipError(f"--masters must be between 1 and 5, not {opts.masters}")
    if opts.masters > 1 and not opts.zk:
        raise MembershipError(f"--masters {opts.masters} needs --zk: standby masters elect a leader through ZooKeeper")
    use_systemd = membership.use_systemd(opts.agent_options.supervisor)
    client = membership.engine()
    check_ttl(opts.token_ttl_s)
    for asked, name in ((opts.zk, "zookeeper"), (opts.hdfs, "hdfs")):
        if asked:
            try:
                client.images.get(SERVICE_IMAGES[name])
            except docker.errors.ImageNotFound:
                raise MembershipError(f"image {SERVICE_IMAGES[name]} is missing on this machine: run "
                                      f"`scylla-singa images build {name}` (the README's setup command does)") from None
    address = membership.machine_address(opts.advertise)
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
            membership.start_agent(state, opts.agent_options, use_systemd, echo)
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
    argv = membership.cli_argv("cluster", "guard", "--ports", ",".join(map(str, ports)))
    membership.supervise(state, "guard", argv, use_systemd)


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
    argv = membership.cli_argv("master", "--host", state.address, "--advertise-ip", state.address,
                               "--port", str(port), "--work-dir", str(machine_dir() / "masters" / name),
                               "--credentials", str(secrets / CREDENTIALS_FILE))
    if state.zk_hosts:
        argv += ["--zk", f"zk://{state.zk_hosts}/mesos"]
    membership.supervise(state, name, argv, use_systemd)
    endpoint = f"{state.address}:{port}"
    state.masters.append(endpoint)
    state.save()
    membership.wait_answers(f"http://{endpoint}/health", name, state)
    echo(f"  {name} serving on {endpoint}")


def check_ttl(ttl_s: float) -> None:
    """A token lives between a minute (time to copy the line) and 30 days."""
    if not 60 <= ttl_s <= 30 * 24 * 3600:
        raise MembershipError(f"a join token's lifetime (--ttl, --token-ttl) must be between 1 minute and 30 days, "
                              f"not {ttl_s:g} s")


def join_line(state: MemberState, client: docker.DockerClient | None = None, ttl_s: float = DEFAULT_TOKEN_TTL_S,
              rotate: bool = False) -> str:
    """A new join token of the first machine's cluster, as the command a joining machine runs."""
    if state.role != FIRST:
        raise MembershipError("join tokens are made on the cluster's first machine (where `cluster init` ran)")
    check_ttl(ttl_s)
    client = client or membership.engine()
    if rotate:  # tokens made before no longer join the swarm
        client.swarm.reload()
        client.swarm.update(rotate_worker_token=True)
    client.swarm.reload()
    worker_token = client.swarm.attrs["JoinTokens"]["Worker"]
    token = JoinToken(token_id=new_token_id(), cluster=state.cluster, master=state.master or state.masters[0],
                      swarm_manager=f"{state.address}:2377", swarm_token=worker_token,
                      agent=membership.credential_of(state, AGENT_CREDENTIAL_FILE),
                      framework=membership.credential_of(state, FRAMEWORK_CREDENTIAL_FILE),
                      expires_at=time.time() + ttl_s, webhdfs=state.webhdfs, zk_hosts=state.zk_hosts)
    state.tokens.append({"id": token.token_id, "expires_at": token.expires_at, "rotated_swarm": rotate})
    state.save()
    return f"scylla-singa cluster join --token {encode(token)} {state.masters[0]}"
