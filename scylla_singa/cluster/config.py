"""What a cluster-in-a-box is: its parameters, names and addresses (pure).

Everything `up` creates is named from one short `prefix` (default
`scylla`), so `down` can find it again after a crash:

    network namespaces   <prefix>-node<i>, <prefix>-master<j>
    host bridge          <prefix>-br0           (host side of the cluster LAN)
    veth (host side)     <prefix>-n<i>, <prefix>-m<j>  (eth0 inside the namespace)
    services network     <prefix>-svc (Docker bridge on the host engine, bridge <prefix>-svc0)
    iptables rules       carry the comment `scylla-cluster:<prefix>`
    containers/networks  on the host engine carry the label `scylla.cluster=<prefix>`
    runtime files        /run/scylla-cluster/<prefix>/ (sockets, pidfiles, exec roots)
    data                 $SCYLLA_HOME/cluster/<prefix>/ (data roots, logs, state.json)

Addresses, on the cluster LAN `subnet` (default 172.31.240.0/24):

    .1                   the host (bridge address; the nodes' gateway and NAT)
    .11, .12, ...        masters (their own namespaces, port 5050)
    .101, .102, ...      nodes (namespace + dockerd + agent on port 5051)

Node engines' docker0 get `172.30.<i>.1/24` (only visible inside the node).
Services (ZooKeeper, HDFS) are containers of the host engine on
`services_subnet` (default 172.31.241.0/24): ZooKeeper .10, HDFS .20,
reached by the host directly and by nodes and their containers through the
host. None of these ranges is one of Docker's defaults (172.17/16 docker0,
172.18/16 docker_gwbridge, the swarm's 10.0.0.0/8 overlay pool).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from scylla_singa.common.home import home_path
from scylla_singa.common.resource_text import ResourceTextError, scalar_resources

DEFAULT_PREFIX = "scylla"
DEFAULT_SUBNET = "172.31.240.0/24"
DEFAULT_SERVICES_SUBNET = "172.31.241.0/24"
DEFAULT_RESOURCES = "cpus:2;mem:4096;disk:20000;net_bw:1000"
DEFAULT_IMAGES = ("scylla-tiny:latest", "singa:latest", "singa-py:latest")
RUN_ROOT = Path("/run/scylla-cluster")
MASTER_PORT = 5050
AGENT_PORT = 5051
ZK_PORT = 2181
WEBHDFS_PORT = 9870
HDFS_RPC_PORT = 8020
MAX_NODES = 40
MAX_MASTERS = 5
MESOS_KINDS = ("ours", "apache")
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{1,7}$")


class ConfigError(ValueError):
    """The cluster's parameters cannot work; the message says which and why."""


@dataclass(frozen=True)
class ClusterConfig:
    """The parameters of one cluster-in-a-box. Validated on construction."""

    nodes: int = 2
    masters: int = 1
    hdfs: bool = False
    zk: bool = False
    agents: bool = True
    prefix: str = DEFAULT_PREFIX
    subnet: str = DEFAULT_SUBNET
    services_subnet: str = DEFAULT_SERVICES_SUBNET
    resources: str = DEFAULT_RESOURCES
    # Per-node overrides of `resources`: (node number, spec), e.g. ((3, "cpus:8;mem:16384;gpus:1"),).
    node_resources: tuple[tuple[int, str], ...] = ()
    images: tuple[str, ...] = DEFAULT_IMAGES
    home: str = field(default_factory=lambda: str(home_path()))
    run_root: str = str(RUN_ROOT)
    # Seconds after which masters give up on a silent (unreachable) or disconnected agent;
    # None keeps Mesos's defaults (15 s x 5 pings, 75 s to re-register).
    agent_timeout: float | None = None
    # Whose masters and agents run: "ours" (`scylla-singa master|agent`) or "apache" (mesos-master and
    # mesos-agent of the Mesos install at `mesos_home`).
    mesos: str = "ours"
    mesos_home: str | None = None
    # Node engines join the host engine's swarm. Without: bare machines (namespace, engine, images), each
    # outside any swarm, for `cluster init` and `cluster join` to make a cluster of.
    swarm: bool = True

    def __post_init__(self) -> None:
        if not _PREFIX_RE.match(self.prefix):
            raise ConfigError(f"prefix {self.prefix!r} must be 2-8 lower-case letters/digits, starting "
                              "with a letter (it names interfaces, which Linux limits to 15 characters)")
        if not 1 <= self.nodes <= MAX_NODES:
            raise ConfigError(f"--nodes must be between 1 and {MAX_NODES}, not {self.nodes}")
        if not 0 <= self.masters <= MAX_MASTERS:
            raise ConfigError(f"--masters must be between 0 and {MAX_MASTERS}, not {self.masters}")
        if self.masters > 1 and not self.zk:
            raise ConfigError(f"--masters {self.masters} needs --zk: standby masters elect a leader "
                              "through ZooKeeper")
        lan, svc = _net(self.subnet, "subnet"), _net(self.services_subnet, "services subnet")
        if lan.prefixlen > 24 or svc.prefixlen > 26:
            raise ConfigError("the cluster subnet must be a /24 or larger and the services subnet a /26 or larger")
        if lan.overlaps(svc):
            raise ConfigError(f"subnet {lan} and services subnet {svc} overlap")
        for reserved in ("172.17.0.0/16", "172.18.0.0/16", "10.0.0.0/8", "172.30.0.0/16"):
            for net in (lan, svc):
                if net.overlaps(ipaddress.ip_network(reserved)):
                    raise ConfigError(f"{net} overlaps {reserved}, which Docker (or the node engines' "
                                      "docker0) uses; choose another private range")
        _resources(self.resources)
        for number, spec in self.node_resources:
            if not 1 <= number <= self.nodes:
                raise ConfigError(f"--node-resources {number}={spec}: there is no node {number} "
                                  f"(nodes are 1 to {self.nodes})")
            _resources(spec)
        if len({n for n, _ in self.node_resources}) != len(self.node_resources):
            raise ConfigError("--node-resources names a node more than once")
        if self.mesos not in MESOS_KINDS:
            raise ConfigError(f"--mesos must be one of {', '.join(MESOS_KINDS)}, not {self.mesos!r}")
        if self.mesos == "apache" and self.agents:
            if not self.mesos_home:
                raise ConfigError("--mesos apache needs a Mesos install (--mesos-home DIR)")
            if self.masters > 1 and self.masters % 2 == 0:
                raise ConfigError(f"--mesos apache with {self.masters} masters: Mesos's replicated log needs a "
                                  f"majority ({self.masters // 2 + 1} of {self.masters}), so losing one master "
                                  "would stop the cluster; use an odd number (1, 3 or 5)")
        if not self.swarm and (self.agents or self.hdfs or self.zk):
            raise ConfigError("bare machines (--machines) run no masters, agents or services: `cluster init` on "
                              "the first starts them; leave out --hdfs and --zk")
        if self.agent_timeout is not None and not 1 <= self.agent_timeout <= 3600:
            raise ConfigError(f"--agent-timeout must be between 1s and 1h, not {self.agent_timeout:g}s")

    # -- names ---------------------------------------------------------------
    @property
    def bridge(self) -> str:
        return f"{self.prefix}-br0"

    @property
    def services_network(self) -> str:
        return f"{self.prefix}-svc"

    @property
    def services_bridge(self) -> str:
        return f"{self.prefix}-svc0"

    @property
    def comment(self) -> str:
        """The iptables comment on every rule this cluster adds."""
        return f"scylla-cluster:{self.prefix}"

    @property
    def data_dir(self) -> Path:
        return Path(self.home) / "cluster" / self.prefix

    @property
    def run_dir(self) -> Path:
        return Path(self.run_root) / self.prefix

    @property
    def state_file(self) -> Path:
        return self.data_dir / "state.json"

    # -- addresses -----------------------------------------------------------
    @property
    def host_address(self) -> str:
        return str(_net(self.subnet, "subnet").network_address + 1)

    @property
    def prefixlen(self) -> int:
        return _net(self.subnet, "subnet").prefixlen

    @property
    def services_gateway(self) -> str:
        return str(_net(self.services_subnet, "services subnet").network_address + 1)

    @property
    def zk_address(self) -> str:
        return str(_net(self.services_subnet, "services subnet").network_address + 10)

    @property
    def hdfs_address(self) -> str:
        return str(_net(self.services_subnet, "services subnet").network_address + 20)

    @property
    def quorum(self) -> int:
        """Replicas of Apache Mesos's replicated log that must agree: a majority of the masters."""
        return self.masters // 2 + 1

    @property
    def zk_url(self) -> str | None:
        """zk://HOST:2181/mesos, where masters publish the leader (None without --zk)."""
        return f"zk://{self.zk_address}:{ZK_PORT}/mesos" if self.zk else None

    @property
    def webhdfs_url(self) -> str | None:
        return f"http://{self.hdfs_address}:{WEBHDFS_PORT}" if self.hdfs else None

    @property
    def hdfs_url(self) -> str | None:
        return f"hdfs://{self.hdfs_address}:{HDFS_RPC_PORT}" if self.hdfs else None

    def node_specs(self) -> list["NodeSpec"]:
        return [NodeSpec.build(self, i) for i in range(1, self.nodes + 1)]

    def master_specs(self) -> list["MasterSpec"]:
        return [MasterSpec.build(self, j) for j in range(1, self.masters + 1)]

    def resources_of(self, number: int) -> str:
        """What the agent of node `number` (1-based) offers: its override, else `resources`."""
        return dict(self.node_resources).get(number, self.resources)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["images"] = list(self.images)
        d["node_resources"] = [list(p) for p in self.node_resources]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ClusterConfig":
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        if "images" in known:
            known["images"] = tuple(known["images"])
        if "node_resources" in known:
            known["node_resources"] = tuple((int(n), str(spec)) for n, spec in known["node_resources"])
        return cls(**known)


@dataclass(frozen=True)
class NodeSpec:
    """One host of the cluster: a namespace, its link, its Docker engine and agent."""

    index: int
    name: str            # netns name = swarm hostname = agent hostname
    veth: str            # host side of the veth pair
    address: str         # on the cluster LAN
    bip: str             # the node engine's docker0
    socket: str          # the node engine's API socket
    exec_root: str
    pidfile: str
    data_root: str
    log: str
    cgroup_parent: str

    @classmethod
    def build(cls, config: ClusterConfig, i: int) -> "NodeSpec":
        name = f"{config.prefix}-node{i}"
        run = config.run_dir / f"node{i}"
        data = config.data_dir / "nodes" / f"node{i}"
        return cls(index=i, name=name, veth=f"{config.prefix}-n{i}",
                   address=str(_net(config.subnet, "subnet").network_address + 100 + i),
                   bip=f"172.30.{i}.1/24", socket=str(run / "docker.sock"), exec_root=str(run / "exec"),
                   pidfile=str(run / "docker.pid"), data_root=str(data / "docker"),
                   log=str(config.data_dir / "logs" / f"{name}-dockerd.log"), cgroup_parent=f"/{name}")

    @property
    def docker_host(self) -> str:
        return f"unix://{self.socket}"


@dataclass(frozen=True)
class MasterSpec:
    """One master: its own namespace and address, port 5050."""

    index: int
    name: str
    veth: str
    address: str

    @classmethod
    def build(cls, config: ClusterConfig, j: int) -> "MasterSpec":
        return cls(index=j, name=f"{config.prefix}-master{j}", veth=f"{config.prefix}-m{j}",
                   address=str(_net(config.subnet, "subnet").network_address + 10 + j))

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{MASTER_PORT}"


def _net(cidr: str, what: str) -> ipaddress.IPv4Network:
    try:
        net = ipaddress.ip_network(cidr, strict=True)
    except ValueError as exc:
        raise ConfigError(f"{what} {cidr!r} is not a network address ({exc})") from None
    if not isinstance(net, ipaddress.IPv4Network) or not net.is_private:
        raise ConfigError(f"{what} {cidr} must be a private IPv4 range")
    return net


def _resources(text: str) -> dict[str, float]:
    """Parse Mesos's "cpus:4;mem:8192;net_bw:1000"; ConfigError when malformed."""
    try:
        out = scalar_resources(text)
    except ResourceTextError as exc:
        raise ConfigError(f"resources {text!r}: {exc} (give NAME:NUMBER parts)") from None
    if "cpus" not in out or "mem" not in out:
        raise ConfigError(f"resources {text!r} must give at least cpus and mem")
    return out
