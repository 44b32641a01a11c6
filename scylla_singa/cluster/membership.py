"""What `cluster init`, `join` and `leave` share (the thin shell's common part).

init (first_machine.py) makes the first machine, join (joining.py) adds one,
leave (leaving.py) takes one out; all of them find the Docker engine and
this machine's address, call the leading master with the machine's
credential, and start supervised processes (supervisor.py) the same way,
and init and join start the machine's agent the same way: here. Every step
is recorded in member_state.py before it is taken.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from scylla_singa.common.home import home_path
from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import (AGENT_CREDENTIAL_FILE, CREDENTIALS_FILE, Credential, CredentialsError,
                                                load_credential)
from scylla_singa.swarm.overlays import SwarmError, default_advertise_address, host_addresses
from . import master_client, supervisor
from .config import AGENT_PORT
from .machine_facts import measure, offered_resources
from .member_state import FIRST, MemberState, load_member, machine_dir

Echo = Callable[[str], None]


class MembershipError(RuntimeError):
    """init, join, token or leave cannot go on; the message says what, where and how to fix it."""


@dataclass(frozen=True)
class AgentOptions:
    """How this machine's agent is set up (init and join share them)."""

    resources: str | None = None      # None: measured
    net_bw_mbps: int | None = None    # None: the link speed, when the kernel reports one
    attributes: str | None = None     # added to host:<hostname>
    supervisor: str = "auto"          # auto | systemd | process


def engine() -> docker.DockerClient:
    """This machine's Docker engine (DOCKER_HOST or the default socket), or a MembershipError saying so."""
    try:
        client = docker.from_env(timeout=300)
        client.ping()
        return client
    except docker.errors.DockerException as exc:
        raise MembershipError(f"this machine's Docker engine does not answer ({exc.__class__.__name__}); run the "
                              "README's setup command on it first (or set DOCKER_HOST)") from None


def use_systemd(choice: str) -> bool:
    """Whether to supervise with systemd: --supervisor auto picks it when the machine was booted by it."""
    if choice == "systemd" and not supervisor.has_systemd():
        raise MembershipError("--supervisor systemd: this machine was not booted by systemd "
                              f"({supervisor.SYSTEMD_RUN_DIR} is missing); use --supervisor process")
    return choice == "systemd" or (choice == "auto" and supervisor.has_systemd())


def cli_argv(*args: str) -> list[str]:
    """`scylla-singa ARGS` with this installation's interpreter (a unit or supervisor runs exactly this)."""
    return [sys.executable, "-m", "scylla_singa", *args]


def machine_address(given: str | None) -> str:
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


def refuse_if_member() -> None:
    """A machine is a member of one cluster at a time: init and join refuse a second."""
    try:
        state = load_member()
    except ValueError as exc:
        raise MembershipError(str(exc)) from None
    if state is not None:
        raise MembershipError(f"this machine is already {'the first machine' if state.role == FIRST else 'a member'}"
                              f" of cluster {state.cluster!r} ({state.status}; recorded in {state.path}); "
                              "`scylla-singa cluster status` shows it, `scylla-singa cluster leave` undoes it")


def master_call(state: MemberState, cred: Credential, method: str, path: str, **kw: Any) -> requests.Response:
    """A call to the leading master (master_client), as a MembershipError when none answers."""
    try:
        return master_client.call(state.masters, cred, method, path, **kw)
    except master_client.MasterUnreachable as exc:
        raise MembershipError(str(exc)) from None


def credential_of(state: MemberState, name: str) -> Credential:
    """One of the credential files init or join wrote in the secrets directory."""
    try:
        return load_credential(Path(state.secrets_dir or "") / name)
    except CredentialsError as exc:
        raise MembershipError(str(exc)) from None


def agents_of(state: MemberState) -> list[dict[str, Any]]:
    """The master's agents (/master/slaves), asked with this machine's agent credential."""
    got = master_call(state, credential_of(state, AGENT_CREDENTIAL_FILE), "GET", "/master/slaves")
    if got.status_code != 200:
        raise MembershipError(f"the master answered {got.status_code} to /master/slaves: {got.text[:200]}")
    return list(got.json().get("slaves", []))


def agent_address(agent: dict[str, Any]) -> str:
    """The address in an agent's pid ("slave(1)@10.0.0.2:5051")."""
    return str(agent.get("pid", "")).rpartition("@")[2].rpartition(":")[0]


def our_agent(state: MemberState) -> dict[str, Any] | None:
    """This machine's agent as the master knows it (by address: an agent restarted after a crash may have a
    new id), or None."""
    live = [a for a in agents_of(state) if agent_address(a) == state.address and a.get("active", True)]
    return live[-1] if live else None


def supervise(state: MemberState, name: str, argv: list[str], use_systemd: bool) -> None:
    """Start `argv` supervised with this machine's SCYLLA_HOME and engine, and record it for `leave`."""
    env = {"SCYLLA_HOME": str(home_path())}
    if os.environ.get("DOCKER_HOST"):
        env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
    record = supervisor.start(name, argv, env, machine_dir() / "run", use_systemd)
    state.supervised.append(record)
    state.save()


def wait_answers(url: str, what: str, state: MemberState, timeout_s: float = 60) -> None:
    """Wait until `url` answers 200; else a MembershipError naming the supervised process's log."""
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


def start_agent(state: MemberState, opts: AgentOptions, use_systemd: bool, echo: Echo) -> None:
    """Measure the machine, start its supervised agent, and wait until the master has it."""
    work = machine_dir() / "agent"
    facts = measure(work, state.address)
    resources = opts.resources or offered_resources(facts, opts.net_bw_mbps)
    attributes = f"host:{facts.hostname}" + (f";{opts.attributes}" if opts.attributes else "")
    secrets = Path(state.secrets_dir or "")
    argv = cli_argv("agent", "--master", state.master or state.masters[0], "--host", state.address,
                    "--advertise-ip", state.address, "--port", str(AGENT_PORT), "--hostname", facts.hostname,
                    "--resources", resources, "--attributes", attributes, "--work-dir", str(work),
                    "--docker-host", os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
                    "--credential", str(secrets / AGENT_CREDENTIAL_FILE),
                    "--http-credentials", str(secrets / CREDENTIALS_FILE))
    if state.webhdfs:
        argv += ["--hdfs", state.webhdfs]
    state.agent_hostname = facts.hostname
    supervise(state, "agent", argv, use_systemd)
    wait_answers(f"http://{state.address}:{AGENT_PORT}/health", "agent", state)
    try:
        wait_until(lambda: our_agent(state) is not None, 60, "the agent to register with the master")
    except TimeoutError as exc:
        record = state.supervised_named("agent")
        raise MembershipError(f"{exc}; its log: {record.log if record else '?'}") from None
    echo(f"  agent {facts.hostname} offers {resources}")
