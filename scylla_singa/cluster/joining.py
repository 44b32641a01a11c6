"""`cluster join`: make this machine a member of the cluster a join token names.

The token is checked before anything changes: its form and expiry here, its
agent credential by the first machine's master. Then the engine joins the
swarm as a worker (listening and carrying the overlays' data on this
machine's address), the credentials are written (0600), and a supervised
agent offers what the machine has (machine_facts.py). A failure undoes what
was made and says at which step.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import docker
import docker.errors

from scylla_singa.mesos.api.credentials import (AGENT_CREDENTIAL_FILE, CREDENTIALS_FILE, FRAMEWORK_CREDENTIAL_FILE,
                                                Credential, credential_json, write_private)
from scylla_singa.swarm.overlays import SwarmError, ensure_job_isolation
from . import master_client, membership, supervisor
from .config import MASTER_PORT
from .join_token import JoinToken, JoinTokenError, decode
from .leaving import leave
from .member_state import MEMBER, MemberState, machine_dir
from .membership import AgentOptions, Echo, MembershipError
JOB_IMAGES = ("singa:latest", "singa-py:latest")   # what jobs run on: built on each machine, no registry


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
    membership.refuse_if_member()
    if ":" not in first:
        first = f"{first}:{MASTER_PORT}"
    use_systemd = membership.use_systemd(agent_options.supervisor)
    check_token(token, first)
    client = membership.engine()
    missing = [tag for tag in JOB_IMAGES if not client.images.list(name=tag)]
    if missing:
        echo(f"note: this machine's engine has no {', '.join(missing)}: processes of jobs on those images that "
             "are placed here will fail to start; build them first (the README's setup command)")
    address = advertise or _route_source(first.rpartition(":")[0])
    address = membership.machine_address(address)
    state = MemberState(MEMBER, token.cluster, address, master=token.master, masters=[first],
                        webhdfs=token.webhdfs, zk_hosts=token.zk_hosts, token_id=token.token_id)
    state.save()
    step = "the swarm"
    try:
        _join_swarm(state, client, token)
        step = "the credentials"
        _write_member_secrets(state, token)
        step = "the agent"
        membership.start_agent(state, agent_options, use_systemd, echo)
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
