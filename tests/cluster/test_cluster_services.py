"""Apache HDFS and ZooKeeper of the cluster, from the host, a node and a container on a node."""

from __future__ import annotations

import subprocess
import sys
import uuid

import hdfs
import pytest
from kazoo.client import KazooClient

from scylla_singa.cluster.state import ClusterInfo
from .cluster_helpers import node_client

# HDFS and ZooKeeper are the same services under either kind of Mesos: checked on our cluster.
pytestmark = pytest.mark.mesos("ours")

# A WebHDFS write and read with busybox only: CREATE answers 307 with the
# DataNode's address, where the bytes go; OPEN is read through wget, which
# follows the redirect. Proves the DataNode advertises an address that a
# container on another host can reach.
WEBHDFS_FROM_BUSYBOX = r"""
set -e
NN=$1; FILE=$2; BODY=$3
loc=$(printf 'PUT /webhdfs/v1%s?op=CREATE&overwrite=true&user.name=test HTTP/1.0\r\n\r\n' "$FILE" \
      | nc "$NN" 9870 | tr -d '\r' | sed -n 's/^Location: //p')
hostport=${loc#http://}; hostport=${hostport%%/*}
answer=$(printf 'PUT /%s HTTP/1.0\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n%s' \
  "${loc#http://*/}" ${#BODY} "$BODY" | nc "${hostport%:*}" "${hostport#*:}" | tr -d '\r')
echo "$answer" | grep '^HTTP/' | grep -v ' 100 '   # the DataNode answers 100 Continue, then 201 Created
wget -q -O - "http://$NN:9870/webhdfs/v1$FILE?op=OPEN&user.name=test"
echo
"""


def _webhdfs(cluster: ClusterInfo) -> hdfs.InsecureClient:
    assert cluster.webhdfs
    return hdfs.InsecureClient(cluster.webhdfs, user="test", timeout=30)


def test_hdfs_round_trip_from_the_host(cluster: ClusterInfo) -> None:
    client = _webhdfs(cluster)
    path = f"/tests/host-{uuid.uuid4().hex[:8]}/job.conf"
    client.write(path, data=b"name: \"digits\"\n", overwrite=True)
    assert client.list(path.rsplit("/", 1)[0]) == ["job.conf"]
    with client.read(path) as reader:
        assert reader.read() == b"name: \"digits\"\n"


def test_hdfs_round_trip_from_a_container_on_a_node(cluster: ClusterInfo) -> None:
    path = f"/tests/node-{uuid.uuid4().hex[:8]}.txt"
    nn = cluster.webhdfs.removeprefix("http://").split(":")[0]
    out = node_client(cluster, 1).containers.run("scylla-tiny:latest", ["sh", "-c", WEBHDFS_FROM_BUSYBOX, "sh",
                                                                        nn, path, "written-on-node2"], remove=True)
    lines = out.decode().splitlines()
    assert lines[0].startswith("HTTP/1.1 201"), out
    assert lines[-1] == "written-on-node2"
    with _webhdfs(cluster).read(path) as reader:  # and the host sees what the node wrote
        assert reader.read() == b"written-on-node2"


def test_hdfs_from_a_node_namespace(cluster: ClusterInfo) -> None:
    script = ("import hdfs,sys\nc=hdfs.InsecureClient(sys.argv[1], user='test')\n"
              "c.write('/tests/from-netns.txt', data=b'ns', overwrite=True)\n"
              "with c.read('/tests/from-netns.txt') as r: print(r.read().decode())")
    out = subprocess.run(["nsenter", f"--net=/var/run/netns/{cluster.nodes[0].name}", sys.executable, "-c",
                          script, cluster.webhdfs], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ns", out.stderr


@pytest.fixture
def kazoo(cluster: ClusterInfo):
    assert cluster.zk_hosts
    clients: list[KazooClient] = []

    def connect() -> KazooClient:
        k = KazooClient(hosts=cluster.zk_hosts, timeout=10)
        k.start(timeout=20)
        clients.append(k)
        return k

    try:
        yield connect
    finally:
        for k in clients:
            k.stop()
            k.close()


def test_zookeeper_round_trip_with_kazoo(kazoo) -> None:
    a = kazoo()
    root = f"/tests/{uuid.uuid4().hex[:8]}"
    a.create(f"{root}/config", b"v1", makepath=True)
    data, stat = a.get(f"{root}/config")
    assert data == b"v1" and stat.version == 0
    a.set(f"{root}/config", b"v2")
    assert a.get(f"{root}/config")[0] == b"v2"


def test_ephemeral_sequential_nodes_order_contenders_and_vanish_with_their_session(kazoo) -> None:
    root = f"/tests/{uuid.uuid4().hex[:8]}/election"
    a, b, watcher = kazoo(), kazoo(), kazoo()
    first = a.create(f"{root}/json.info_", b'{"address":{"ip":"a"}}', ephemeral=True, sequence=True, makepath=True)
    second = b.create(f"{root}/json.info_", b'{"address":{"ip":"b"}}', ephemeral=True, sequence=True)
    assert first < second and first.endswith("0000000000")
    assert sorted(watcher.get_children(root)) == [first.rsplit("/", 1)[1], second.rsplit("/", 1)[1]]
    a.stop()  # the leader's session ends: its znode goes, the next in line leads
    assert watcher.get_children(root) == [second.rsplit("/", 1)[1]]


def test_zookeeper_answers_from_a_node_namespace(cluster: ClusterInfo) -> None:
    script = ("import sys; from kazoo.client import KazooClient; k=KazooClient(hosts=sys.argv[1]); "
              "k.start(timeout=20); print(k.exists('/') is not None); k.stop()")
    out = subprocess.run(["nsenter", f"--net=/var/run/netns/{cluster.nodes[1].name}", sys.executable, "-c",
                          script, cluster.zk_hosts], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
