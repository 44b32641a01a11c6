"""The session's cluster: engines in namespaces, swarm workers, images, cross-node overlay, agents.

The hosts are the same whoever's Mesos runs on them: what only concerns the
hosts is checked on our cluster; the masters, agents and status on both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import docker
import pytest

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.crossnode import run_cross_node_check
from scylla_singa.cluster.local import local_cluster
from scylla_singa.cluster.state import ClusterInfo
from scylla_singa.cluster.up_down import up
from .cluster_helpers import master_state, node_client


@pytest.mark.mesos("ours")
def test_each_node_engine_answers_in_its_namespace_as_a_swarm_worker(cluster: ClusterInfo,
                                                                      host_engine: docker.DockerClient) -> None:
    lan = cluster.subnet.rsplit(".", 1)[0]
    assert [n.address for n in cluster.nodes] == [f"{lan}.{100 + i}" for i in range(1, len(cluster.nodes) + 1)]
    for i, node in enumerate(cluster.nodes):
        info = node_client(cluster, i).info()
        assert info["Name"] == node.name                       # own UTS namespace
        assert info["Swarm"]["LocalNodeState"] == "active"
        assert info["Swarm"]["NodeAddr"] == node.address        # advertises its LAN address
        assert info["Swarm"]["ControlAvailable"] is False       # a worker
        entry = host_engine.nodes.get(node.swarm_node_id).attrs
        assert entry["Spec"]["Role"] == "worker" and entry["Status"]["State"] == "ready"
        assert entry["Description"]["Hostname"] == node.name


@pytest.mark.mesos("ours")
def test_node_engines_have_the_images_of_the_host(cluster: ClusterInfo, host_engine: docker.DockerClient) -> None:
    want = host_engine.images.get("scylla-tiny:latest").id
    for i in range(len(cluster.nodes)):
        assert node_client(cluster, i).images.get("scylla-tiny:latest").id == want


@pytest.mark.mesos("ours")
def test_a_container_on_node1_reaches_a_container_on_node2_by_name(cluster: ClusterInfo,
                                                                   host_engine: docker.DockerClient) -> None:
    result = run_cross_node_check(host_engine, node_client(cluster, 1), node_client(cluster, 0))
    assert result.server_ip.startswith("10.")
    assert not host_engine.networks.list(names=[result.network])


def test_agents_registered_with_the_master_at_their_node_addresses(cluster: ClusterInfo, cluster_state) -> None:
    assert cluster.master is not None, "the session's cluster runs masters and agents"
    state = master_state(cluster_state)  # the leader's: standbys know no agents
    agents = sorted((a["hostname"], a["pid"].split("@")[1]) for a in state["slaves"])
    assert agents == [(n.name, n.agent) for n in cluster.nodes]


def test_status_json_gives_addresses_nodes_agents_and_services(cluster: ClusterInfo,
                                                               cluster_config: ClusterConfig) -> None:
    env = {**os.environ, "SCYLLA_HOME": cluster_config.home}
    out = subprocess.run([sys.executable, "-m", "scylla_singa", "cluster", "status", "--json",
                          "--prefix", cluster_config.prefix], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    assert status["status"] == "up"
    svc = cluster_config.services_subnet.rsplit(".", 1)[0]
    assert status["zk"] == f"zk://{svc}.10:2181/mesos" and status["webhdfs"] == f"http://{svc}.20:9870"
    assert [(n["name"], n["engine"], n["swarm"]) for n in status["nodes"]] == \
        [(f"{cluster.prefix}-node{i}", "running", "active") for i in range(1, len(cluster.nodes) + 1)]
    assert status["service_containers"] == {"zookeeper": "running (healthy)", "hdfs": "running (healthy)"}
    if cluster.master:
        assert status["master"] == cluster.master
        assert all(n["agent_process"] == "running" for n in status["nodes"])


@pytest.mark.mesos("ours")
def test_local_cluster_reads_the_running_cluster(cluster: ClusterInfo, cluster_config: ClusterConfig) -> None:
    found = local_cluster(home=cluster_config.home, prefix=cluster_config.prefix)
    assert found == cluster


def test_up_again_with_the_same_config_keeps_the_cluster(cluster: ClusterInfo,
                                                         cluster_config: ClusterConfig) -> None:
    said: list[str] = []
    assert up(cluster_config, echo=said.append) == cluster
    assert said == ["cluster is already up"]


@pytest.mark.mesos("ours")
def test_each_node_drops_traffic_from_its_gwbridge_to_job_overlays(cluster: ClusterInfo) -> None:
    from scylla_singa.swarm.overlays import ISOLATION_RULE
    for node in cluster.nodes:
        check = subprocess.run(["nsenter", f"--net=/var/run/netns/{node.name}", "iptables", "-C", *ISOLATION_RULE],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
