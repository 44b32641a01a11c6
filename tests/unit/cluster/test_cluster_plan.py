"""The plan of `cluster up` (pure): what is created, in which order, with which flags."""

from __future__ import annotations

import pytest

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.engines import dockerd_argv
from scylla_singa.cluster.launcher import argv_for
from scylla_singa.cluster.resource_plan import Resource, plan


def _index(steps: list[Resource], name: str) -> int:
    return next(i for i, s in enumerate(steps) if s.name == name)


def _kinds(steps: list[Resource]) -> list[str]:
    return [s.kind for s in steps]


FULL = ClusterConfig(nodes=3, masters=2, zk=True, hdfs=True)


@pytest.mark.parametrize("config, counts", [
    (ClusterConfig(nodes=1, agents=False), {"netns": 1, "engine": 1, "service": 0, "process": 0}),
    (ClusterConfig(nodes=2), {"netns": 3, "engine": 2, "service": 0, "process": 3}),
    (ClusterConfig(nodes=2, hdfs=True), {"service": 1, "service_ready": 1, "service_network": 1}),
    (ClusterConfig(nodes=2, zk=True), {"service": 1, "service_ready": 1}),
    (FULL, {"netns": 5, "veth": 5, "engine": 3, "swarm_member": 3, "images": 3, "service": 2, "process": 5,
            "iptables": 5, "bridge": 1}),
], ids=["engines-only", "default", "hdfs", "zk", "full"])
def test_plan_creates_what_the_config_asks_for(config: ClusterConfig, counts: dict[str, int]) -> None:
    kinds = _kinds(plan(config))
    assert {k: kinds.count(k) for k in counts} == counts


@pytest.mark.parametrize("before, after", [
    ("scylla-br0", "scylla-n1"),                          # the bridge before links on it
    ("iptables-1", "scylla-node1-swarm"),                 # forwarding before node-to-node traffic
    ("scylla-node1", "scylla-n1"),                        # namespace before its veth
    ("scylla-n1", "scylla-node1-engine"),                 # address before dockerd binds it
    ("scylla-node1-engine", "scylla-node1-swarm"),
    ("scylla-node1-engine", "scylla-node1-isolation"),     # DOCKER-USER exists once dockerd runs
    ("scylla-node1-isolation", "scylla-node1-agent"),
    ("scylla-node1-swarm", "scylla-node1-images"),
    ("scylla-svc", "scylla-zookeeper"),
    ("scylla-zookeeper", "scylla-node1-engine"),          # JVMs warm up while engines start
    ("scylla-zookeeper-ready", "scylla-master1-master"),  # masters elect through ZooKeeper
    ("scylla-hdfs-ready", "scylla-node1-agent"),          # agents fetch from HDFS
    ("scylla-master2-master", "scylla-node1-agent"),      # agents register with a master
    ("scylla-node3-images", "scylla-node1-agent"),
    ("scylla-m1", "scylla-master1-master"),
])
def test_plan_orders_dependencies(before: str, after: str) -> None:
    steps = plan(FULL)
    assert _index(steps, before) < _index(steps, after)


def test_names_are_unique_and_every_kind_is_known() -> None:
    from scylla_singa.cluster.kinds import KINDS
    steps = plan(FULL)
    assert len({s.name for s in steps}) == len(steps)
    assert {s.kind for s in steps} <= set(KINDS)


def test_agents_find_the_leader_through_zookeeper_when_masters_elect() -> None:
    agent = next(s for s in plan(FULL) if s.name == "scylla-node2-agent")
    argv = agent.params["argv"]
    assert argv[:3] == ["agent", "--master", "zk://172.31.241.10:2181/mesos"]
    assert argv[argv.index("--hostname") + 1] == "scylla-node2"
    assert argv[argv.index("--docker-host") + 1] == "unix:///run/scylla-cluster/scylla/node2/docker.sock"
    assert agent.params["netns"] == "scylla-node2"
    assert agent.params["optional"]["--hdfs"] == "http://172.31.241.20:9870"


def test_without_a_zk_capable_master_agents_are_given_master1_directly() -> None:
    agents = [s for s in plan(FULL, master_options=frozenset({"--host", "--port"})) if s.name.endswith("-agent")]
    assert {a.params["argv"][2] for a in agents} == {"172.31.240.11:5050"}


def test_a_single_master_is_given_directly_without_zookeeper() -> None:
    agent = next(s for s in plan(ClusterConfig(nodes=1)) if s.kind == "process" and "agent" in s.name)
    assert agent.params["argv"][2] == "172.31.240.11:5050"


def test_masters_bind_their_own_namespace_address() -> None:
    m = next(s for s in plan(FULL) if s.name == "scylla-master2-master")
    assert m.params["argv"][:3] == ["master", "--host", "172.31.240.12"]
    assert m.params["optional"]["--zk"] == "zk://172.31.241.10:2181/mesos"


def test_iptables_rules_accept_bridge_to_bridge_and_carry_the_comment() -> None:
    rules = [s.params for s in plan(ClusterConfig()) if s.kind == "iptables"]
    assert {"table": "filter", "chain": "DOCKER-USER", "rule": ["-i", "scylla-br0", "-o", "scylla-br0", "-j", "ACCEPT"],
            "comment": "scylla-cluster:scylla"} in rules
    assert any(r["table"] == "nat" and "MASQUERADE" in r["rule"] for r in rules)
    assert all(r["comment"] == "scylla-cluster:scylla" for r in rules)


def test_resources_round_trip_through_dicts() -> None:
    for r in plan(FULL):
        assert Resource.from_dict(r.to_dict()) == r


@pytest.mark.parametrize("optional, supported, want", [
    ({"--zk": "zk://h/mesos"}, frozenset({"--zk"}), ["--zk", "zk://h/mesos"]),
    ({"--zk": "zk://h/mesos"}, frozenset(), []),                      # the command has no --zk yet
    ({"--zk": None}, frozenset({"--zk"}), []),                        # not configured
], ids=["supported", "unsupported", "unset"])
def test_optional_flags_are_passed_only_when_supported_and_set(optional, supported, want) -> None:
    assert argv_for(["master", "--port", "5050"], optional, supported) == ["master", "--port", "5050", *want]


def test_node_engines_start_with_nsenter_and_their_own_roots() -> None:
    n = FULL.node_specs()[1]
    argv = dockerd_argv(n.name, n.name, n.socket, n.exec_root, n.pidfile, n.data_root, n.bip, n.cgroup_parent,
                        "/x/daemon.json")
    assert argv[:2] == ["nsenter", "--net=/var/run/netns/scylla-node2"]
    assert "ip" not in argv[:3]  # `ip netns exec` remounts /sys: dockerd fails there
    tail = argv[argv.index("dockerd"):]
    for flag, value in [("--data-root", n.data_root), ("--exec-root", n.exec_root), ("-H", f"unix://{n.socket}"),
                        ("--pidfile", n.pidfile), ("--bip", "172.30.2.1/24"), ("--cgroup-parent", "/scylla-node2"),
                        ("--config-file", "/x/daemon.json")]:
        assert tail[tail.index(flag) + 1] == value


def test_agents_allow_volumes_from_the_clusters_jobs_directory() -> None:
    agent = next(s for s in plan(ClusterConfig(nodes=1, home="/srv/scylla")) if s.name == "scylla-node1-agent")
    argv = agent.params["argv"]
    assert argv[argv.index("--allowed-host-paths") + 1] == "/srv/scylla/jobs"


@pytest.mark.parametrize("timeout, flags", [
    (None, {}),
    (10.0, {"--agent-ping-timeout": "2s", "--max-agent-ping-timeouts": "5", "--agent-reregister-timeout": "30s"}),
], ids=["mesos-defaults", "10s"])
def test_the_agent_timeout_sets_the_masters_ping_and_reregistration_flags(timeout, flags) -> None:
    master = next(s for s in plan(ClusterConfig(masters=2, zk=True, agent_timeout=timeout))
                  if s.name == "scylla-master2-master")
    got = {k: v for k, v in master.params["optional"].items() if k not in ("--advertise-ip", "--zk")}
    assert got == flags
    if flags:
        assert argv_for(master.params["argv"], master.params["optional"], frozenset(flags))[-2:] == \
            ["--agent-reregister-timeout", "30s"]


def test_masters_and_agents_run_with_the_clusters_scylla_home() -> None:
    procs = [s for s in plan(ClusterConfig(nodes=1, home="/srv/scylla")) if s.kind == "process"]
    assert [p.params["env"] for p in procs] == [{"SCYLLA_HOME": "/srv/scylla"}] * 2
