"""Finding and removing what a cluster left behind, with no state file to go by.

Everything `up` makes is named from the cluster's prefix, labelled with it,
or carries its iptables comment (see `config`), so a crash half-way through
`up`, a lost state file or a killed `down` can still be undone. `sweep`
removes, in dependency order, everything of one prefix it finds, and
returns what it removed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
from pathlib import Path

import docker

from scylla_singa.common.waiting import wait_until
from . import engines, netns, services, swarmjoin
from .config import ClusterConfig, NodeSpec


def node_indexes(config: ClusterConfig) -> list[int]:
    """Node numbers seen in namespaces, run directories and data directories."""
    pat = re.compile(rf"^(?:{re.escape(config.prefix)}-)?node(\d+)$")
    names = netns.netns_list(config.prefix)
    for d in (config.run_dir, config.data_dir / "nodes"):
        if d.is_dir():
            names += [p.name for p in d.iterdir()]
    return sorted({int(m.group(1)) for n in names if (m := pat.match(n))})


def _terminate(pids: list[int], timeout_s: float = 10) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        wait_until(lambda: not any(os.path.exists(f"/proc/{p}") and _not_zombie(p) for p in pids), timeout_s,
                   "processes to exit")
    except TimeoutError:
        engines.kill_processes(pids)


def _not_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def sweep(config: ClusterConfig, host: docker.DockerClient | None, keep_data: bool = False) -> list[str]:
    """Remove every trace of the cluster `config.prefix`; idempotent. Returns what it removed."""
    removed: list[str] = []
    nodes = [NodeSpec.build(config, i) for i in node_indexes(config)]
    # Masters and agents first (they talk to engines and to each other), gracefully;
    # the engines' own processes (containerd, shims) go with their engines below.
    for ns in netns.netns_list(config.prefix):
        ours = [p for p in netns.netns_pids(ns) if _master_or_agent(engines.cmdline(p))]
        if ours:
            _terminate(ours)
            removed.append(f"{len(ours)} master/agent process(es) in {ns}")
    for n in nodes:
        if engines.answers(n.socket):
            swarmjoin.leave(host, n.socket)
        if os.path.exists(n.socket) or engines.daemon_pid(n.pidfile, n.socket) or os.path.exists(n.data_root):
            engines.stop(n.name, n.socket, n.exec_root, n.pidfile, n.data_root, n.cgroup_parent, keep_data=keep_data)
            removed.append(f"engine of {n.name}")
    if host is not None:
        for node_id in swarmjoin.nodes_in_subnet(host, config.subnet):
            swarmjoin.remove_node(host, node_id)
            removed.append(f"swarm node {node_id[:12]}")
        for c in services.containers_of(host, config.prefix):
            services.remove(host, c.name)
            removed.append(f"container {c.name}")
        for net in services.networks_of(host, config.prefix):
            services.remove_network(host, net.name)
            removed.append(f"network {net.name}")
    for ns in netns.netns_list(config.prefix):
        netns.delete_netns(ns)
        removed.append(f"namespace {ns}")
    for link in netns.links_with_prefix(config.prefix):
        netns.delete_link(link)
        removed.append(f"link {link}")
    for table, spec in netns.rules_with_comment(config.comment):
        netns.delete_rule_spec(table, spec)
        removed.append(f"iptables -t {table} {' '.join(spec[1:3])} rule")
    strays = engines.processes_under([str(config.run_dir), str(config.data_dir)])
    if strays:  # e.g. an agent whose namespace mount is already gone
        _terminate(strays)
        removed.append(f"{len(strays)} stray process(es)")
    for cg in cgroup_parents(config.prefix):
        engines.remove_cgroup(cg)
        removed.append(f"cgroup {cg}")
    removed += _directories(config, keep_data)
    return removed


def _master_or_agent(cmdline: str) -> bool:
    """Ours (`python -m scylla_singa master|agent`) or Apache Mesos's (mesos-master, mesos-agent)."""
    return "scylla_singa" in cmdline or "/mesos-master" in cmdline or "/mesos-agent" in cmdline


def cgroup_parents(prefix: str) -> list[str]:
    """Cgroup parents of node engines (`/<prefix>-node<i>`) present in any hierarchy."""
    root = engines.CGROUP_ROOT
    if not root.is_dir():
        return []
    found = {p.name for p in root.glob(f"*/{prefix}-node*") if p.is_dir()}
    found |= {p.name for p in root.glob(f"{prefix}-node*") if p.is_dir()}
    return sorted(f"/{name}" for name in found)


def _directories(config: ClusterConfig, keep_data: bool) -> list[str]:
    removed = []
    roots = [str(config.run_dir), str(config.data_dir)]
    engines.unmount_under(roots)
    if config.run_dir.exists():
        shutil.rmtree(config.run_dir, ignore_errors=True)
        removed.append(str(config.run_dir))
    parent = Path(config.run_root)
    if parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
    if config.data_dir.exists():
        if keep_data:
            for child in config.data_dir.iterdir():
                if child.name != "nodes":
                    shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink()
        else:
            shutil.rmtree(config.data_dir, ignore_errors=True)
            removed.append(str(config.data_dir))
            for d in (config.data_dir.parent,):  # $SCYLLA_HOME/cluster, when it is now empty
                if d.is_dir() and not any(d.iterdir()):
                    d.rmdir()
    return removed


def leftovers(config: ClusterConfig, host: docker.DockerClient | None) -> list[str]:
    """Everything of cluster `config.prefix` that exists on this machine (what `sweep` would remove).

    Empty after a clean `down`: the check tests make that the machine is as before.
    """
    found = [f"namespace {n}" for n in netns.netns_list(config.prefix)]
    found += [f"link {n}" for n in netns.links_with_prefix(config.prefix)]
    found += [f"iptables -t {t} {' '.join(s)}" for t, s in netns.rules_with_comment(config.comment)]
    found += [f"cgroup {c}" for c in cgroup_parents(config.prefix)]
    roots = [str(config.run_dir), str(config.data_dir)]
    found += [f"mount {m}" for m in engines.mounts_under(roots)]
    found += [f"process {p}: {engines.cmdline(p)[:80]}" for p in engines.processes_under(roots)]
    found += [f"directory {d}" for d in roots if os.path.exists(d)]
    if host is not None:
        found += [f"swarm node {n}" for n in swarmjoin.nodes_in_subnet(host, config.subnet)]
        found += [f"container {c.name}" for c in services.containers_of(host, config.prefix)]
        found += [f"network {n.name}" for n in services.networks_of(host, config.prefix)]
    return found
