"""Command lines of real Apache Mesos daemons (pure): what every agent must get, whatever it is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.cluster.apache_mesos import MesosInstall, agent_argv, master_argv, master_host
from scylla_singa.cluster.config import ClusterConfig

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


def test_real_masters_sit_clear_of_the_clusters_own_hosts() -> None:
    config = ClusterConfig(nodes=3, masters=2, zk=True, prefix="mr", subnet="172.31.250.0/24",
                           services_subnet="172.31.251.0/24")
    taken = {m.address for m in config.master_specs()} | {n.address for n in config.node_specs()}
    ours = [master_host(config, j) for j in (1, 2, 3)]
    assert not taken & {address for _, _, address in ours}
    assert all(ns.startswith("mr-") and len(veth) <= 15 for ns, veth, _ in ours)
