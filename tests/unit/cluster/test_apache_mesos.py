"""Command lines of real Apache Mesos daemons (pure): what every agent must get, whatever it is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.cluster.apache_mesos import MesosInstall, agent_argv, agent_timeout_flags, master_argv
from scylla_singa.cluster.config import ClusterConfig, ConfigError
from scylla_singa.cluster.resource_plan import PROCESS_KINDS, plan

INSTALL = MesosInstall(Path("/opt/mesos-1.12.0"))


def flags(argv: list[str]) -> dict[str, str]:
    return dict(a[2:].split("=", 1) for a in argv[1:] if "=" in a)


def test_an_agent_never_kills_containers_it_did_not_start() -> None:
    argv = agent_argv(INSTALL, "127.0.0.1:5050", "127.0.0.1", 5051, "h", "/tmp/a", "cpus:1;mem:512",
                      extra={"docker_kill_orphans": "true"})
    assert flags(argv)["docker_kill_orphans"] == "false"
    assert [a for a in argv if a.startswith("--docker_kill_orphans")] == ["--docker_kill_orphans=false"]


def test_two_agents_share_no_directory() -> None:
    a, b = (flags(agent_argv(INSTALL, "m:5050", "10.0.0.1", 5051, f"h{i}", f"/tmp/agent{i}", "cpus:1;mem:512"))
            for i in (1, 2))
    dirs = ("work_dir", "runtime_dir", "log_dir", "fetcher_cache_dir", "docker_store_dir", "appc_store_dir")
    assert all(a[d].startswith("/tmp/agent1/") and b[d].startswith("/tmp/agent2/") for d in dirs)


def test_an_agent_runs_docker_tasks_on_the_engine_it_is_given() -> None:
    f = flags(agent_argv(INSTALL, "zk://zk:2181/mesos", "172.31.250.101", 5051, "mr-node1", "/tmp/a",
                         "cpus:2;mem:4096", docker_socket="/run/x/node1/docker.sock", attributes="host:mr-node1"))
    assert f["docker_socket"] == "/run/x/node1/docker.sock"
    assert f["containerizers"].split(",")[0] == "docker"
    assert f["launcher_dir"] == "/opt/mesos-1.12.0/libexec"
    assert (f["master"], f["ip"], f["hostname"], f["attributes"]) == \
        ("zk://zk:2181/mesos", "172.31.250.101", "mr-node1", "host:mr-node1")


@pytest.mark.parametrize("zk, quorum, want", [
    (None, 1, {"registry": "in_memory"}),
    ("zk://zk:2181/mesos", 2, {"registry": "replicated_log", "zk": "zk://zk:2181/mesos", "quorum": "2"}),
], ids=["standalone", "zookeeper"])
def test_master_registry_follows_zookeeper(zk: str | None, quorum: int, want: dict[str, str]) -> None:
    f = flags(master_argv(INSTALL, "10.0.0.1", 5050, "/tmp/m/work", "/tmp/m/logs", zk=zk, quorum=quorum))
    assert {k: f.get(k) for k in want} == want
    if zk is None:
        assert "zk" not in f and "quorum" not in f


def test_an_agent_without_a_docker_socket_never_touches_an_engine() -> None:
    f = flags(agent_argv(INSTALL, "m:5050", "127.0.0.1", 5051, "h", "/tmp/a", "cpus:1;mem:512", docker_socket=None))
    assert f["containerizers"] == "mesos" and "docker_socket" not in f and f["docker_kill_orphans"] == "false"


def test_agent_timeout_maps_to_mesos_ping_flags() -> None:
    assert agent_timeout_flags(10.0) == {"agent_ping_timeout": "2000ms", "max_agent_ping_timeouts": "5"}
    assert agent_timeout_flags(None) == {}


def apache(**kw) -> ClusterConfig:
    return ClusterConfig(**{"nodes": 3, "masters": 3, "zk": True, "prefix": "mr", "subnet": "172.31.250.0/24",
                            "services_subnet": "172.31.251.0/24", "home": "/tmp/mr-home", "mesos": "apache",
                            "mesos_home": "/opt/mesos-1.12.0", "agent_timeout": 10.0, **kw})


def test_cluster_up_mesos_apache_plans_real_daemons_in_the_namespaces() -> None:
    config = apache()
    steps = plan(config)
    daemons = [r for r in steps if r.kind in PROCESS_KINDS]
    assert [r.kind for r in daemons] == ["mesos_master"] * 3 + ["mesos_agent"] * 3
    assert [r.name for r in daemons] == [f"mr-master{j}-master" for j in (1, 2, 3)] + \
        [f"mr-node{i}-agent" for i in (1, 2, 3)]
    m = flags(daemons[0].params["argv"])
    assert (m["ip"], m["port"], m["zk"], m["quorum"], m["registry"]) == \
        ("172.31.250.11", "5050", "zk://172.31.251.10:2181/mesos", "2", "replicated_log")
    assert m["work_dir"].startswith("/tmp/mr-home/cluster/mr/") and m["agent_ping_timeout"] == "2000ms"
    a = flags(daemons[3].params["argv"])
    node1 = config.node_specs()[0]
    assert (a["master"], a["ip"], a["hostname"], a["docker_socket"], a["docker_kill_orphans"]) == \
        ("zk://172.31.251.10:2181/mesos", node1.address, "mr-node1", node1.socket, "false")
    assert daemons[3].params["netns"] == "mr-node1" and daemons[3].params["address"] == f"{node1.address}:5051"
    # Every node's engine, swarm membership and images come before any agent that runs tasks on them.
    names = [r.name for r in steps]
    assert max(names.index(f"mr-node{i}-images") for i in (1, 2, 3)) < names.index("mr-node1-agent")


def test_one_apache_master_without_zookeeper_keeps_its_registry_in_memory() -> None:
    (m, a) = [r for r in plan(apache(nodes=1, masters=1, zk=False)) if r.kind in PROCESS_KINDS]
    assert flags(m.params["argv"])["registry"] == "in_memory" and "zk" not in flags(m.params["argv"])
    assert flags(a.params["argv"])["master"] == "172.31.250.11:5050"


@pytest.mark.parametrize("kw, message", [
    ({"masters": 2}, "odd number"),
    ({"mesos_home": None}, "needs a Mesos install"),
    ({"mesos": "mesosphere"}, "--mesos must be one of"),
], ids=["even-masters", "no-install", "unknown-kind"])
def test_apache_clusters_that_cannot_work_are_refused(kw, message) -> None:
    with pytest.raises(ConfigError, match=message):
        apache(**kw)
