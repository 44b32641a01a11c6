"""Faults to inject into a running cluster, for fault tests: a host cut off or dead, a process killed.

Every fault acts only on what the cluster's state file records, and `down`
cleans up after any of them (a dead host's engine, cgroup and mounts are
swept like a crashed one's). The `restart_*` helpers undo a fault the way
an operator (or systemd) would, so one cluster can take several faults in
a row; they record new pids in the state file.
"""

from __future__ import annotations

import os
import signal

import docker

from scylla_singa.common.waiting import wait_until
from . import engines, launcher, netns
from .config import NodeSpec
from .kinds import KINDS, Context
from .resource_plan import PROCESS_KINDS
from .sh import run
from .state import State, save


class FaultError(LookupError):
    """The cluster has no such node, master or process."""


def _node(state: State, name: str) -> NodeSpec:
    for spec in state.config.node_specs():
        if name in (spec.name, f"node{spec.index}"):
            return spec
    raise FaultError(f"no node {name!r} in cluster {state.config.prefix!r}")


def _link(state: State, name: str) -> str:
    """The host-side veth of a node or master namespace."""
    for spec in [*state.config.node_specs(), *state.config.master_specs()]:
        if name == spec.name:
            return spec.veth
    raise FaultError(f"no node or master {name!r} in cluster {state.config.prefix!r}")


def cut_off(state: State, name: str) -> None:
    """Partition node or master `name` from everything (its link goes down; processes keep running)."""
    run(["ip", "link", "set", _link(state, name), "down"])


def reconnect(state: State, name: str) -> None:
    """Undo `cut_off`."""
    run(["ip", "link", "set", _link(state, name), "up"])


def kill_process(state: State, resource: str) -> int:
    """SIGKILL a master or agent by resource name (e.g. "scylla-master1-master") and wait until it is
    gone (its port free again); returns its pid."""
    entry = state.entry(resource)
    if entry is None or entry.resource.kind not in PROCESS_KINDS or not entry.done:
        raise FaultError(f"no running process {resource!r} in cluster {state.config.prefix!r}")
    pid, start = entry.facts["pid"], entry.facts.get("start")
    if launcher.running(pid, start):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        wait_until(lambda: not launcher.running(pid, start), 10, f"{resource} (pid {pid}) to die")
    return pid


def kill_host(state: State, name: str) -> None:
    """Power a node off: SIGKILL its agent, its engine and every container process, at once."""
    spec = _node(state, name)
    agent = state.entry(f"{spec.name}-agent")
    victims = [p for p in netns.netns_pids(spec.name)]
    victims += engines.cgroup_pids(spec.cgroup_parent)
    if agent is not None and agent.done:
        victims.append(agent.facts["pid"])
    engines.kill_processes(sorted(set(victims)))


def restart_process(state: State, resource: str) -> int:
    """Start a master or agent again as `up` did (after `kill_process`); returns its new pid.

    A process that still runs is kept. The state file records the new pid,
    so `down` stops it.
    """
    entry = state.entry(resource)
    if entry is None or entry.resource.kind not in PROCESS_KINDS or not entry.done:
        raise FaultError(f"no process {resource!r} in cluster {state.config.prefix!r}")
    if launcher.running(entry.facts.get("pid"), entry.facts.get("start")):
        return entry.facts["pid"]
    entry.facts = KINDS[entry.resource.kind].create(Context(host=None), resource, **entry.resource.params)
    save(state)
    return entry.facts["pid"]


def _engine_entry(state: State, name: str):
    spec = _node(state, name)
    entry = state.entry(f"{spec.name}-engine")
    if entry is None or not entry.done:
        raise FaultError(f"node {name!r} of cluster {state.config.prefix!r} has no engine")
    return spec, entry


def kill_engine(state: State, name: str) -> list[int]:
    """Crash node `name`'s Docker engine: SIGKILL dockerd, its containerd and shims and every
    container process, at once (the agent and the node's network stay). Returns the pids killed."""
    spec, entry = _engine_entry(state, name)
    victims = engines.cgroup_pids(spec.cgroup_parent) + engines.processes_under([spec.exec_root, spec.data_root])
    pid = engines.daemon_pid(spec.pidfile, spec.socket)
    victims += [pid] if pid else []
    victims = sorted(set(victims))
    engines.kill_processes(victims)
    return victims


def restart_engine(state: State, name: str) -> int:
    """Start node `name`'s Docker engine again (same data root: it rejoins the swarm); its pid."""
    _, entry = _engine_entry(state, name)
    entry.facts = engines.start(**entry.resource.params)
    save(state)
    return entry.facts["pid"]


def restart_service(state: State, host: docker.DockerClient, service: str, timeout_s: float = 120) -> None:
    """Restart a service container ("hdfs": NameNode and DataNode; "zookeeper") and wait until healthy."""
    from .services import wait_healthy
    name = f"{state.config.prefix}-{service}"
    if state.entry(name) is None:
        raise FaultError(f"no service {service!r} in cluster {state.config.prefix!r}")
    host.containers.get(name).restart(timeout=10)
    wait_healthy(host, name, timeout_s)


def leading_master(state: State) -> str | None:
    """The resource name of the master that leads (per its ZooKeeper znode), or None."""
    from kazoo.exceptions import NoNodeError

    from scylla_singa.mesos.api.leader_znodes import resolve_zk_leader
    if not state.config.zk_url:
        return None
    try:
        address = resolve_zk_leader(state.config.zk_url)
    except (ValueError, NoNodeError):  # no master has registered (yet)
        return None
    for spec in state.config.master_specs():
        if spec.endpoint == address:
            return f"{spec.name}-master"
    return None
