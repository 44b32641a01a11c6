"""The state file of a cluster, and the API that tells others its addresses.

`$SCYLLA_HOME/cluster/<prefix>/state.json` records the cluster's config and
every resource `up` created, in order, each with the facts its creation
returned (pids, swarm node ids). A resource is written *before* it is
created, so a crash leaves it listed and `down` still destroys it.

Other parts read a running cluster through `scylla_singa.cluster.local.local_cluster()`
(a cluster-in-a-box, as here, or the cluster this machine joined):

    from scylla_singa.cluster.local import local_cluster
    info = local_cluster()            # None when no cluster is up
    info.master                       # "zk://172.31.241.10:2181/mesos" or "172.31.240.11:5050"
    info.webhdfs                      # "http://172.31.241.20:9870" or None
    [n.docker_host for n in info.nodes]
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.common.files import write_json_atomic
from scylla_singa.common.home import home_path
from .config import AGENT_PORT, ClusterConfig, DEFAULT_PREFIX
from .resource_plan import Resource, framework_credential_file

VERSION = 1


@dataclass
class Entry:
    """A resource of the plan as created: `done` once its create returned."""

    resource: Resource
    done: bool = False
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class State:
    config: ClusterConfig
    status: str = "starting"  # starting | up | failed | stopping
    entries: list[Entry] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)
    made_dirs: list[str] = field(default_factory=list)  # created by `up` (e.g. $SCYLLA_HOME): `down` removes them

    def entry(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.resource.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {"version": VERSION, "status": self.status, "started_at": self.started_at,
                "config": self.config.to_dict(), "made_dirs": self.made_dirs,
                "resources": [{**e.resource.to_dict(), "done": e.done, "facts": e.facts} for e in self.entries]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "State":
        entries = [Entry(Resource.from_dict(r), bool(r.get("done")), dict(r.get("facts") or {}))
                   for r in d.get("resources", [])]
        return cls(ClusterConfig.from_dict(d["config"]), d.get("status", "starting"), entries,
                   d.get("started_at", 0.0), list(d.get("made_dirs", [])))


def state_path(home: str | os.PathLike | None = None, prefix: str = DEFAULT_PREFIX) -> Path:
    return Path(home or home_path()) / "cluster" / prefix / "state.json"


def save(state: State) -> None:
    """Write atomically (temp file, then rename)."""
    write_json_atomic(state.config.state_file, state.to_dict(), indent=1)


def load(path: Path) -> State | None:
    try:
        return State.from_dict(json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, KeyError) as exc:
        raise ValueError(f"{path} is not a cluster state file ({exc}); `cluster down` cleans up by discovery "
                         "when it is removed") from None


@dataclass(frozen=True)
class NodeInfo:
    name: str
    address: str
    docker_host: str
    swarm_node_id: str | None
    agent: str | None        # "address:5051" when an agent runs there


@dataclass(frozen=True)
class ClusterInfo:
    """What a running cluster offers, for `cluster status --json`, tests and `run`."""

    prefix: str
    status: str
    state_file: str
    host_address: str
    subnet: str
    masters: list[str]            # "ip:5050" of every master started
    master: str | None            # what to give `run --master` / agents
    zk: str | None                # zk://host:2181/mesos
    zk_hosts: str | None          # host:2181 (for kazoo)
    webhdfs: str | None           # http://host:9870
    hdfs: str | None              # hdfs://host:8020
    nodes: list[NodeInfo]
    services: dict[str, str]      # service name -> container name
    mesos: str = "ours"           # whose masters and agents: "ours" or "apache" (Apache Mesos)
    credential_file: str | None = None   # the framework credential its masters and agents accept
    # Whether every agent sees this machine's files at the same paths (a cluster-in-a-box does; machines
    # joined with `cluster init`/`join` do not, so job files go through HDFS).
    shared_files: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def info(state: State) -> ClusterInfo:
    cfg = state.config
    started = {e.resource.name for e in state.entries if e.done}
    masters = [m.endpoint for m in cfg.master_specs() if f"{m.name}-master" in started]
    elected = any(a == "--zk" or a.startswith("--zk=") for e in state.entries
                  if e.resource.name.endswith("-master") for a in e.facts.get("argv", ()))
    if masters and elected:
        master: str | None = cfg.zk_url
    else:
        master = masters[0] if masters else None
    nodes = []
    for spec in cfg.node_specs():
        if f"{spec.name}-engine" not in started:
            continue
        swarm = state.entry(f"{spec.name}-swarm")
        nodes.append(NodeInfo(spec.name, spec.address, spec.docker_host,
                              (swarm.facts.get("node_id") if swarm else None),
                              f"{spec.address}:{AGENT_PORT}" if f"{spec.name}-agent" in started else None))
    services = {e.resource.name.removeprefix(f"{cfg.prefix}-"): e.resource.name
                for e in state.entries if e.resource.kind == "service" and e.done}
    return ClusterInfo(prefix=cfg.prefix, status=state.status, state_file=str(cfg.state_file),
                       host_address=cfg.host_address, subnet=cfg.subnet, masters=masters, master=master,
                       zk=cfg.zk_url if "zookeeper" in services else None,
                       zk_hosts=f"{cfg.zk_address}:2181" if "zookeeper" in services else None,
                       webhdfs=cfg.webhdfs_url if "hdfs" in services else None,
                       hdfs=cfg.hdfs_url if "hdfs" in services else None, nodes=nodes, services=services,
                       mesos=cfg.mesos, credential_file=str(framework_credential_file(cfg)) if "credentials"
                       in started else None)


def box_cluster(home: str | os.PathLike | None = None, prefix: str | None = None) -> ClusterInfo | None:
    """The cluster `scylla-singa cluster up` left running on this machine, or None.

    Without a prefix: the default prefix's cluster when it is up, else the
    only cluster that is up under any prefix (`cluster up --prefix X`
    should not need `--master` on every `run`); None when several are up
    and none is the default, since guessing would run jobs in the wrong one.
    """
    if prefix is not None:
        state = load(state_path(home, prefix))
        return info(state) if state is not None and state.status == "up" else None
    default = box_cluster(home, DEFAULT_PREFIX)
    if default is not None:
        return default
    root = Path(home or home_path()) / "cluster"
    up = [found for d in (sorted(root.iterdir()) if root.is_dir() else [])
          if d.is_dir() and (found := box_cluster(home, d.name)) is not None]
    return up[0] if len(up) == 1 else None
