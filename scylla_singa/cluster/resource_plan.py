"""What `cluster up` creates, as data: an ordered list of resources (pure).

`up` creates them in order and records each one in the state file before it
creates it (write-ahead), so `down` can destroy exactly what exists, in
reverse order, even after a crash half-way. Each kind has one create and one
idempotent destroy, in `kinds.py`.

The order follows dependencies: the LAN (bridge, forwarding rules, NAT)
before anything on it; services start early (their JVMs warm up while node
engines start) and are waited for last; masters before agents, which
register with them; a node's engine before its swarm membership and images,
and those before its agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.mesos.api.credentials import AGENT_CREDENTIAL_FILE, CREDENTIALS_FILE, FRAMEWORK_CREDENTIAL_FILE
from .apache_mesos import (MesosInstall, agent_argv, agent_auth_flags, agent_timeout_flags as apache_timeout_flags,
                           master_argv, master_auth_flags)
from .config import AGENT_PORT, ClusterConfig, MASTER_PORT, MasterSpec, NodeSpec

# The kinds of resource that are a master or an agent process: ours (`scylla-singa master|agent`) and Apache
# Mesos's (mesos-master, mesos-agent). Each is named `<namespace>-master` or `<node>-agent`.
PROCESS_KINDS = ("process", "mesos_master", "mesos_agent")

# The users the hdfs and zookeeper images run as (images/*/Dockerfile): they own their data directories.
HDFS_UID = 990
ZK_UID = 991


@dataclass(frozen=True)
class Resource:
    """One thing `up` creates. `kind` selects its create/destroy; `name` is unique in a plan."""

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "params": self.params}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Resource":
        return cls(d["kind"], d["name"], dict(d.get("params") or {}))


def iptables_rules(config: ClusterConfig) -> list[Resource]:
    """Forwarding and NAT for the cluster LAN, each rule tagged with the cluster's comment.

    Docker sets the FORWARD policy to DROP and, with br_netfilter, bridged
    node-to-node frames (the overlay's VXLAN among them) traverse FORWARD too:
    without the first rule they are dropped. The others let nodes (and their
    containers, NATed by the node engine) reach the services network and,
    through MASQUERADE, the outside (the Debian mirror).
    """
    br, svc = config.bridge, config.services_bridge
    rules = [
        ("filter", "DOCKER-USER", ["-i", br, "-o", br, "-j", "ACCEPT"]),
        ("filter", "DOCKER-USER", ["-i", br, "!", "-o", br, "-j", "ACCEPT"]),
        ("filter", "DOCKER-USER", ["-o", br, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED",
                                   "-j", "ACCEPT"]),
        ("filter", "DOCKER-USER", ["-i", svc, "-o", br, "-j", "ACCEPT"]),
        ("nat", "POSTROUTING", ["-s", config.subnet, "!", "-d", config.services_subnet, "!", "-o", br,
                                "-j", "MASQUERADE"]),
    ]
    return [Resource("iptables", f"iptables-{i}", {"table": t, "chain": c, "rule": r, "comment": config.comment})
            for i, (t, c, r) in enumerate(rules, 1)]


def lan(config: ClusterConfig) -> list[Resource]:
    return [Resource("bridge", config.bridge, {"address": f"{config.host_address}/{config.prefixlen}"}),
            *iptables_rules(config)]


def namespace_host(config: ClusterConfig, name: str, veth: str, address: str) -> list[Resource]:
    """A network namespace on the LAN: the namespace, then its veth with address and default route."""
    return [Resource("netns", name, {}),
            Resource("veth", veth, {"netns": name, "bridge": config.bridge,
                                    "address": f"{address}/{config.prefixlen}", "gateway": config.host_address})]


def services(config: ClusterConfig) -> list[Resource]:
    if not (config.hdfs or config.zk):
        return []
    out = [Resource("service_network", config.services_network,
                    {"subnet": config.services_subnet, "gateway": config.services_gateway,
                     "bridge": config.services_bridge, "label": config.prefix})]
    if config.zk:
        out.append(Resource("service", f"{config.prefix}-zookeeper",
                            {"image": "scylla-zookeeper:latest", "network": config.services_network,
                             "address": config.zk_address, "label": config.prefix, "env": {},
                             "data_dir": str(config.data_dir / "services" / "zookeeper"), "uid": ZK_UID}))
    if config.hdfs:
        out.append(Resource("service", f"{config.prefix}-hdfs",
                            {"image": "scylla-hdfs:latest", "network": config.services_network,
                             "address": config.hdfs_address, "label": config.prefix,
                             "env": {"HDFS_ADVERTISE": config.hdfs_address, "HDFS_REPLICATION": "1"},
                             "data_dir": str(config.data_dir / "services" / "hdfs"), "uid": HDFS_UID}))
    return out


def service_waits(config: ClusterConfig) -> list[Resource]:
    return [Resource("service_ready", f"{r.name}-ready", {"container": r.name, "timeout_s": 120})
            for r in services(config) if r.kind == "service"]


def master(config: ClusterConfig, spec: MasterSpec) -> list[Resource]:
    if config.mesos == "apache":
        return [*namespace_host(config, spec.name, spec.veth, spec.address), apache_master(config, spec)]
    argv = ["master", "--host", spec.address, "--port", str(MASTER_PORT),
            "--work-dir", str(config.data_dir / "masters" / spec.name),
            "--credentials", str(secrets_dir(config) / CREDENTIALS_FILE)]
    optional = {"--advertise-ip": spec.address, "--zk": config.zk_url, **agent_timeout_flags(config)}
    return [*namespace_host(config, spec.name, spec.veth, spec.address),
            Resource("process", f"{spec.name}-master",
                     {"netns": spec.name, "argv": argv, "optional": optional,
                      "log": str(config.data_dir / "logs" / f"{spec.name}.log"),
                      "ready_url": f"http://{spec.address}:{MASTER_PORT}/health", "timeout_s": 60,
                      "env": _env(config)})]


def apache_master(config: ClusterConfig, spec: MasterSpec) -> Resource:
    """A real mesos-master in its namespace: with ZooKeeper it contends for the lead and keeps the
    registry in a replicated log of a majority of the masters (`quorum`), else in memory."""
    d = config.data_dir / "masters" / spec.name
    argv = master_argv(MesosInstall(Path(str(config.mesos_home))), spec.address, MASTER_PORT, str(d / "work"),
                       str(d / "logs"), zk=config.zk_url, quorum=config.quorum,
                       extra={**apache_timeout_flags(config.agent_timeout),
                              **master_auth_flags(str(secrets_dir(config) / CREDENTIALS_FILE))})
    return Resource("mesos_master", f"{spec.name}-master",
                    {"netns": spec.name, "argv": argv, "log": str(config.data_dir / "logs" / f"{spec.name}.log"),
                     "address": spec.endpoint, "timeout_s": 60})


def apache_agent(config: ClusterConfig, spec: NodeSpec) -> Resource:
    """A real mesos-agent in the node's namespace, on the node's address, running Docker tasks on the
    node's own engine (never killing containers it did not start: see apache_mesos)."""
    master_url = config.zk_url or config.master_specs()[0].endpoint
    argv = agent_argv(MesosInstall(Path(str(config.mesos_home))), master_url, spec.address, AGENT_PORT, spec.name,
                      str(config.data_dir / "agents" / spec.name), config.resources_of(spec.index),
                      docker_socket=spec.socket, attributes=f"host:{spec.name}",
                      extra=agent_auth_flags(str(secrets_dir(config) / AGENT_CREDENTIAL_FILE),
                                             str(secrets_dir(config) / CREDENTIALS_FILE)))
    return Resource("mesos_agent", f"{spec.name}-agent",
                    {"netns": spec.name, "argv": argv,
                     "log": str(config.data_dir / "logs" / f"{spec.name}-agent.log"),
                     "address": f"{spec.address}:{AGENT_PORT}", "timeout_s": 60})


def secrets_dir(config: ClusterConfig) -> Path:
    """Where the cluster keeps its credentials (0600 files; `down` removes them with the data)."""
    return config.data_dir / "secrets"


def framework_credential_file(config: ClusterConfig) -> Path:
    """What frameworks on this machine authenticate to the cluster's masters (and agents) with."""
    return secrets_dir(config) / FRAMEWORK_CREDENTIAL_FILE


def _env(config: ClusterConfig) -> dict[str, str]:
    """Masters and agents keep whatever they keep by default under the cluster's home, not the host's."""
    return {"SCYLLA_HOME": config.home}


def agent_timeout_flags(config: ClusterConfig) -> dict[str, str | None]:
    """The masters' flags for `agent_timeout`: pings every fifth of it (an agent silent for
    five is unreachable), and three times as long for a disconnected agent to come back.

    The re-register timeout is also how long a newly elected leader waits for the agents
    of its predecessor before it answers reconciliations of their tasks with TASK_LOST;
    agents find the new leader only after ZooKeeper ends the old one's session, so this
    must be well above the time a failover takes (Mesos requires at least 10 minutes).
    """
    t = config.agent_timeout
    if t is None:
        return {}
    return {"--agent-ping-timeout": f"{t / 5:g}s", "--max-agent-ping-timeouts": "5",
            "--agent-reregister-timeout": f"{3 * t:g}s"}


def agent_master(config: ClusterConfig, masters_use_zk: bool = True) -> str:
    """What agents are told with --master: the zk:// URL when masters elect through
    ZooKeeper, else the first master's address."""
    if config.zk_url and masters_use_zk:
        return config.zk_url
    return config.master_specs()[0].endpoint


def node(config: ClusterConfig, spec: NodeSpec, masters_use_zk: bool = True) -> list[Resource]:
    out = [*namespace_host(config, spec.name, spec.veth, spec.address),
           Resource("engine", f"{spec.name}-engine",
                    {"node": spec.name, "netns": spec.name, "socket": spec.socket, "exec_root": spec.exec_root,
                     "pidfile": spec.pidfile, "data_root": spec.data_root, "bip": spec.bip,
                     "cgroup_parent": spec.cgroup_parent, "log": spec.log, "timeout_s": 60}),
           # Job overlays must not reach each other through the node's docker_gwbridge either.
           Resource("job_isolation", f"{spec.name}-isolation", {"netns": spec.name}),
           *([Resource("swarm_member", f"{spec.name}-swarm",
                       {"node": spec.name, "socket": spec.socket, "address": spec.address,
                        "subnet": config.subnet, "timeout_s": 60})] if config.swarm else []),
           Resource("images", f"{spec.name}-images",
                    {"node": spec.name, "socket": spec.socket, "images": list(config.images),
                     "cache": str(config.data_dir / "cache")})]
    if config.agents and config.masters >= 1 and config.mesos == "apache":
        out.append(apache_agent(config, spec))
    elif config.agents and config.masters >= 1:
        argv = ["agent", "--master", agent_master(config, masters_use_zk), "--hostname", spec.name,
                "--port", str(AGENT_PORT), "--resources", config.resources_of(spec.index),
                "--attributes", f"host:{spec.name}", "--docker-host", spec.docker_host,
                "--work-dir", str(config.data_dir / "agents" / spec.name),
                # Volume delivery of a framework on this machine (same SCYLLA_HOME) mounts from here.
                "--allowed-host-paths", str(Path(config.home) / "jobs"),
                "--credential", str(secrets_dir(config) / AGENT_CREDENTIAL_FILE),
                "--http-credentials", str(secrets_dir(config) / CREDENTIALS_FILE)]
        optional = {"--advertise-ip": spec.address, "--hdfs": config.webhdfs_url}
        out.append(Resource("process", f"{spec.name}-agent",
                            {"netns": spec.name, "argv": argv, "optional": optional,
                             "log": str(config.data_dir / "logs" / f"{spec.name}-agent.log"),
                             "ready_url": f"http://{spec.address}:{AGENT_PORT}/health", "timeout_s": 60,
                             "env": _env(config)}))
    return out


def plan(config: ClusterConfig, master_options: frozenset[str] | None = None) -> list[Resource]:
    """Everything `up` creates for `config`, in creation order. Names are unique.

    `master_options` are the flags `scylla-singa master` offers (None: all);
    without `--zk` masters cannot elect, so agents are pointed at master 1.
    """
    masters_use_zk = master_options is None or "--zk" in master_options
    steps = [Resource("directories", "directories",
                      {"paths": [str(config.data_dir / "logs"), str(config.run_dir)]}),
             Resource("credentials", "credentials", {"dir": str(secrets_dir(config))}),
             *lan(config), *services(config)]
    for spec in config.master_specs() if config.agents else []:
        steps += namespace_host(config, spec.name, spec.veth, spec.address)
    # Engines start before the waits on services and masters, so JVMs and daemons overlap.
    for spec in config.node_specs():
        steps += [r for r in node(config, spec) if r.kind not in PROCESS_KINDS]
    steps += service_waits(config)
    if config.agents:
        for spec in config.master_specs():
            steps += [r for r in master(config, spec) if r.kind in PROCESS_KINDS]
        for spec in config.node_specs():
            steps += [r for r in node(config, spec, masters_use_zk) if r.kind in PROCESS_KINDS]
    names = [s.name for s in steps]
    assert len(names) == len(set(names)), f"duplicate resource names in plan: {names}"
    return steps
