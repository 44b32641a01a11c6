"""`cluster leave`: take this machine out of its cluster and undo what init or join made.

The agent is drained first (DRAIN_AGENT: no new offers, its tasks are killed,
so their frameworks hear and restart them elsewhere), stopped, and marked
gone (MARK_AGENT_GONE) so the master forgets it at once; then the first
machine's masters, guard and services go, the engine leaves the swarm, and
`$SCYLLA_HOME/machine` is removed. On the first machine it refuses while
other machines are members.
"""

from __future__ import annotations

import shutil
import subprocess

import docker
import docker.errors

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import AGENT_CREDENTIAL_FILE
from . import member_guard, membership, services, supervisor
from .member_state import FIRST, MemberState, load_member, machine_dir
from .membership import Echo, MembershipError
DRAIN_TIMEOUT_S = 300.0
GWBRIDGE = "docker_gwbridge"   # the bridge an engine makes when it enters a swarm


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
        others = [a for a in membership.agents_of(state)
                  if a.get("active", True) and membership.agent_address(a) != state.address]
        if others:
            names = ", ".join(f"{a.get('hostname')} ({membership.agent_address(a)})" for a in others)
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
        ours = membership.our_agent(state)
    except MembershipError as exc:
        ours = None
        problems.append(f"drain: {exc} (the agent is stopped without draining)")
    cred = membership.credential_of(state, AGENT_CREDENTIAL_FILE) if ours is not None else None
    if ours is not None and cred is not None:
        agent_id = ours["id"]
        got = membership.master_call(state, cred, "POST", "/api/v1",
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
        got = membership.master_call(state, cred, "POST", "/api/v1",
                    json={"type": "MARK_AGENT_GONE", "mark_agent_gone": {"agent_id": {"value": ours["id"]}}})
        if got.status_code not in (200, 202):
            problems.append(f"MARK_AGENT_GONE answered {got.status_code}: {got.text[:200]}")
    return problems


def _tasks_on(state: MemberState, agent_id: str) -> int:
    got = membership.master_call(state, membership.credential_of(state, AGENT_CREDENTIAL_FILE), "GET", "/master/tasks")
    live = {"TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING"}
    return sum(1 for t in got.json().get("tasks", []) if t.get("slave_id") == agent_id and t.get("state") in live)


def _remove_services(state: MemberState) -> list[str]:
    if not state.services:
        return []
    try:
        client = membership.engine()
    except MembershipError as exc:
        return [f"services {', '.join(state.services)}: {exc}"]
    for name in state.services:
        services.remove(client, name)
    return []


def _leave_swarm(state: MemberState, echo: Echo) -> list[str]:
    if state.swarm not in ("joined", "initialised"):
        return []
    try:
        client = membership.engine()
        if client.info().get("Swarm", {}).get("LocalNodeState") != "inactive":
            client.swarm.leave(force=state.swarm == "initialised")
        echo("  left the swarm")
        for net in client.networks.list(names=[GWBRIDGE]):  # the engine made it for the swarm; left unused
            if net.name == GWBRIDGE and not net.attrs.get("Containers"):
                net.remove()
    except (MembershipError, docker.errors.APIError) as exc:
        return [f"swarm leave: {exc}"]
    return []
