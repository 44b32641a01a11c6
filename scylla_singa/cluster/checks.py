"""`cluster check`: the cluster's working parts, each proved by using it."""

from __future__ import annotations

from collections.abc import Iterator

import docker
import requests

from scylla_singa.swarm.overlay_check import OverlayCheckError
from .crossnode import run_cross_node_check
from .state import State, info


def run_checks(state: State, host: docker.DockerClient, image: str) -> Iterator[tuple[str, bool]]:
    """Yield (what was checked, passed) for the overlay between neighbouring nodes, HDFS and ZooKeeper."""
    i = info(state)
    clients = [docker.DockerClient(base_url=n.docker_host, timeout=120) for n in i.nodes]
    for k in range(len(i.nodes) - 1):
        a, b = i.nodes[k], i.nodes[k + 1]
        try:
            r = run_cross_node_check(host, clients[k + 1], clients[k], image)
            yield f"{a.name} -> {b.name}: {r.client} reached {r.server} ({r.server_ip}) in {r.seconds:.1f}s", True
        except OverlayCheckError as exc:
            yield f"{a.name} -> {b.name}: {exc}", False
    if i.webhdfs:
        try:
            ok = requests.get(f"{i.webhdfs}/webhdfs/v1/?op=GETFILESTATUS", timeout=10).status_code == 200
        except requests.RequestException:
            ok = False
        yield f"WebHDFS at {i.webhdfs}", ok
    if i.zk_hosts:
        from kazoo.client import KazooClient
        k = KazooClient(hosts=i.zk_hosts, timeout=10)
        try:
            k.start(timeout=15)
            yield f"ZooKeeper at {i.zk_hosts} (children of /: {len(k.get_children('/'))})", True
        except Exception as exc:  # noqa: BLE001 - kazoo raises several kinds
            yield f"ZooKeeper at {i.zk_hosts}: {exc}", False
        finally:
            k.stop()
            k.close()
    for m in i.masters:
        try:
            ok = requests.get(f"http://{m}/health", timeout=5).status_code == 200
        except requests.RequestException:
            ok = False
        yield f"master at {m}", ok
