"""Node engines as workers of the host engine's swarm.

The host engine is (made) a swarm manager with `scylla_singa.swarm.ensure_swarm`
and is never made to leave or re-initialise: other work uses it. Nodes join
it as workers with the worker token, listening, advertising and carrying the
data path on their LAN address. A node data root reused from an earlier
cluster may hold a stale swarm membership: it is left before joining. On
`down`, a node leaves and its entry is removed from the manager.
"""

from __future__ import annotations

import ipaddress

import docker
import docker.errors

from scylla_singa.common.waiting import wait_until
from scylla_singa.swarm.overlays import ensure_swarm
from . import engines


class SwarmJoinError(RuntimeError):
    """A node engine could not become a worker of the host swarm."""


def _member_of(info: dict, cluster_id: str, address: str) -> bool:
    sw = info.get("Swarm", {})
    return (sw.get("LocalNodeState") == "active" and sw.get("NodeAddr") == address
            and (sw.get("Cluster") or {}).get("ID", cluster_id) == cluster_id and not sw.get("ControlAvailable"))


def join(host: docker.DockerClient, node: str, socket: str, address: str, timeout_s: float = 60,
         **_: object) -> dict:
    """Make the node engine a worker of the host's swarm; returns {node_id, manager}. Idempotent."""
    manager = ensure_swarm(host)
    host.swarm.reload()
    cluster_id = host.swarm.id
    token = host.swarm.attrs["JoinTokens"]["Worker"]
    c = engines.client(socket)
    try:
        state = c.info().get("Swarm", {})
        if _member_of(c.info(), cluster_id, address) and _manager_knows(host, state.get("NodeID", "")):
            return {"node_id": state["NodeID"], "manager": manager.node_addr}
        if state.get("LocalNodeState") not in (None, "", "inactive"):
            c.swarm.leave(force=True)  # stale: an earlier cluster's swarm, or a half-finished join
        c.swarm.join(remote_addrs=[f"{manager.node_addr}:2377"], join_token=token,
                     listen_addr=f"{address}:2377", advertise_addr=address, data_path_addr=address)
        node_id = c.info()["Swarm"]["NodeID"]
    except docker.errors.APIError as exc:
        raise SwarmJoinError(f"{node} could not join the swarm at {manager.node_addr}:2377: "
                             f"{exc.explanation}") from None
    finally:
        c.close()
    wait_until(lambda: _ready(host, node_id), timeout_s, f"swarm node {node} ({node_id[:12]}) to be ready")
    return {"node_id": node_id, "manager": manager.node_addr}


def _manager_knows(host: docker.DockerClient, node_id: str) -> bool:
    try:
        return bool(node_id) and host.nodes.get(node_id) is not None
    except docker.errors.NotFound:
        return False


def _ready(host: docker.DockerClient, node_id: str) -> bool:
    try:
        return host.nodes.get(node_id).attrs["Status"]["State"] == "ready"
    except docker.errors.NotFound:
        return False


def leave(host: docker.DockerClient | None, socket: str, node_id: str | None = None, **_: object) -> None:
    """The node leaves (if its engine answers) and the manager forgets it; idempotent."""
    if engines.answers(socket):
        c = engines.client(socket, timeout=30)
        try:
            node_id = node_id or c.info().get("Swarm", {}).get("NodeID") or None
            if c.info().get("Swarm", {}).get("LocalNodeState") != "inactive":
                c.swarm.leave(force=True)
        except docker.errors.APIError:
            pass
        finally:
            c.close()
    if host is not None and node_id:
        remove_node(host, node_id)


def remove_node(host: docker.DockerClient, node_id: str) -> None:
    """`docker node rm --force` on the manager; never removes the manager's own node."""
    try:
        node = host.nodes.get(node_id)
    except docker.errors.NotFound:
        return
    if node.attrs.get("Spec", {}).get("Role") == "manager":
        return
    try:
        node.remove(force=True)
    except docker.errors.NotFound:
        pass


def nodes_in_subnet(host: docker.DockerClient, subnet: str) -> list[str]:
    """Ids of the manager's worker nodes whose address lies in `subnet` (the cluster's nodes)."""
    net = ipaddress.ip_network(subnet)
    found = []
    try:
        nodes = host.nodes.list()
    except docker.errors.APIError:  # the host engine is not a manager: nothing of ours there
        return []
    for n in nodes:
        addr = n.attrs.get("Status", {}).get("Addr", "")
        try:
            inside = ipaddress.ip_address(addr) in net
        except ValueError:
            inside = False
        if inside and n.attrs.get("Spec", {}).get("Role") == "worker":
            found.append(n.id)
    return found
