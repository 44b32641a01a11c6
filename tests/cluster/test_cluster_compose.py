"""compose/hdfs.yml and compose/zookeeper.yml under pytest-docker (Debian's docker-compose v1)."""

from __future__ import annotations

import uuid
from pathlib import Path

import hdfs
import requests
from kazoo.client import KazooClient
from pytest_docker.plugin import get_docker_services

from scylla_singa.mesos.api.credentials import CredentialsError, load_credential

REPO = Path(__file__).resolve().parent.parent.parent


def _hdfs_ready(url: str) -> bool:
    try:
        beans = requests.get(f"{url}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState", timeout=2).json()
        bean = beans["beans"][0]
        return bean["FSState"] == "Operational" and bean["NumLiveDataNodes"] >= 1 and bean["CapacityRemaining"] > 0
    except (requests.RequestException, ValueError, KeyError, IndexError):
        return False


def test_compose_hdfs_takes_a_round_trip(compose_services, docker_ip) -> None:
    url = f"http://{docker_ip}:{compose_services.port_for('hdfs', 9870)}"
    compose_services.wait_until_responsive(lambda: _hdfs_ready(url), timeout=120, pause=0.5)
    client = hdfs.InsecureClient(url, user="test", timeout=30)
    path = f"/compose/{uuid.uuid4().hex[:8]}.bin"
    client.write(path, data=b"\x00\x01compose", overwrite=True)  # redirected to the DataNode's own address
    with client.read(path) as reader:
        assert reader.read() == b"\x00\x01compose"


def test_compose_zookeeper_answers_kazoo(compose_services, docker_ip) -> None:
    hosts = f"{docker_ip}:{compose_services.port_for('zookeeper', 2181)}"
    k = KazooClient(hosts=hosts, timeout=10)
    k.start(timeout=60)
    try:
        path = k.create("/compose/n_", b"x", ephemeral=True, sequence=True, makepath=True)
        assert k.get(path)[0] == b"x"
    finally:
        k.stop()
        k.close()


def test_compose_cluster_master_sees_both_agents(docker_compose_command, tmp_path, monkeypatch) -> None:
    """compose/cluster.yml: ZooKeeper, HDFS, a master and two agents, all containers of this engine."""
    monkeypatch.setenv("SCYLLA_COMPOSE_DIR", str(tmp_path / "compose"))
    files = [str(REPO / "compose" / "cluster.yml")]
    project = f"scylla-test-{uuid.uuid4().hex[:8]}"
    with get_docker_services(docker_compose_command, files, project, ["up -d"], ["down -v"]) as services:
        master = f"127.0.0.1:{services.port_for('master', 5050)}"

        credential = tmp_path / "compose" / "master" / "framework.credential"   # the master made it

        def agents() -> list[str]:
            try:
                anonymous = requests.get(f"http://{master}/master/state", timeout=2)
                assert anonymous.status_code == 401, anonymous.status_code   # secure as any master
                state = requests.get(f"http://{master}/master/state", timeout=2,
                                     headers=load_credential(credential).headers()).json()
            except (requests.RequestException, ValueError, CredentialsError):
                return []
            return sorted(a["hostname"] for a in state.get("slaves", []))

        services.wait_until_responsive(lambda: agents() == ["agent1", "agent2"], timeout=90, pause=0.5)
        assert agents() == ["agent1", "agent2"]
