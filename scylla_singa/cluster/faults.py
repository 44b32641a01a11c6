"""Faults to inject into a running cluster, for fault tests: a host cut off or dead, a process killed.

Every fault acts only on what the cluster's state file records, and `down`
cleans up after any of them (a dead host's engine, cgroup and mounts are
swept like a crashed one's).
"""

from __future__ import annotations

import os
import signal

from . import engines, netns
from .config import NodeSpec
from .sh import run
from .state import State


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
    """SIGKILL a master or agent by resource name (e.g. "scylla-master1-master"); returns its pid."""
    entry = state.entry(resource)
    if entry is None or entry.resource.kind != "process" or not entry.done:
        raise FaultError(f"no running process {resource!r} in cluster {state.config.prefix!r}")
    pid = entry.facts["pid"]
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
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
