"""Docker Swarm membership and the per-job attachable overlay networks.

Containers of one job reach each other by name across hosts because they sit
on one overlay network; Docker only lets standalone containers (which is what
Mesos's Docker containerizer starts) join an overlay created `--attachable`,
and only on engines that are swarm members. This module makes the local
engine a swarm manager when needed and creates, finds and removes job
networks. Every network it makes carries the label `scylla.job`, which is how
cleanup finds what a job left behind.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import threading
import time
from dataclasses import dataclass

import docker
import docker.errors
import docker.types
from docker.models.networks import Network

from scylla_singa.common.waiting import Deadline, WaitTimeout, wait_until
from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL, job_network_name

# Every job overlay gets a /24 of this pool. Containers also have an egress
# interface on docker_gwbridge, so without more a container could send to
# another job's address through the host; one DROP rule for the pool on
# docker_gwbridge keeps jobs apart (and such packets on this host).
JOB_POOL = ipaddress.ip_network("10.213.0.0/16")
_CREATING = threading.Lock()   # create_job_network: one subnet pick at a time in this process
ISOLATION_RULE = ["DOCKER-USER", "-i", "docker_gwbridge", "-d", str(JOB_POOL), "-j", "DROP"]


class SwarmError(RuntimeError):
    """The engine cannot provide what a job network needs; the message says how to fix it."""


@dataclass(frozen=True)
class SwarmState:
    """What the local engine says about its swarm membership."""

    node_id: str
    node_addr: str
    is_manager: bool


def host_addresses() -> dict[str, str]:
    """Non-loopback IPv4 addresses of this network namespace: address -> interface."""
    out = subprocess.run(["ip", "-j", "-4", "addr", "show"], capture_output=True, text=True, check=True).stdout
    found: dict[str, str] = {}
    for iface in json.loads(out):
        for addr in iface.get("addr_info", []):
            if addr.get("family") == "inet" and not ipaddress.ip_address(addr["local"]).is_loopback:
                found[addr["local"]] = iface["ifname"]
    return found


def default_advertise_address() -> str:
    """The address of the interface holding the default route, else the first non-Docker address."""
    addrs = host_addresses()
    out = subprocess.run(["ip", "-j", "route", "show", "default"], capture_output=True, text=True).stdout
    routes = json.loads(out) if out.strip() else []
    dev = routes[0].get("dev") if routes else None
    for addr, iface in addrs.items():
        if iface == dev:
            return addr
    for addr, iface in addrs.items():
        if not iface.startswith(("docker", "br-", "veth")):
            return addr
    raise SwarmError("this host has no non-loopback IPv4 address to advertise the swarm on; "
                     "configure a network interface or pass an advertise address")


def swarm_state(client: docker.DockerClient) -> SwarmState | None:
    """The engine's active swarm membership, or None when it is not in a swarm."""
    info = client.info().get("Swarm", {})
    if info.get("LocalNodeState") != "active":
        return None
    return SwarmState(info.get("NodeID", ""), info.get("NodeAddr", ""), bool(info.get("ControlAvailable")))


def ensure_swarm(client: docker.DockerClient, advertise_addr: str | None = None) -> SwarmState:
    """Make the engine a swarm manager; idempotent.

    A swarm is kept when this engine manages it and advertises an address this
    host still has. A stale one (left in the data root by an earlier machine,
    advertising an address that no longer exists, or stuck pending/error) is
    left and re-initialised. An engine that is a *worker* of another swarm is
    not touched: SwarmError, since leaving would cut it off from that swarm.
    """
    info = client.info().get("Swarm", {})
    state = info.get("LocalNodeState", "inactive")
    current = swarm_state(client)
    local = host_addresses()
    if current and current.is_manager and current.node_addr in local:
        ensure_job_isolation()
        return current
    if current and not current.is_manager:
        raise SwarmError(f"this Docker engine is a worker of a swarm managed elsewhere (node {current.node_id}); "
                         "create job networks through a manager, or `docker swarm leave` first")
    if state in ("active", "pending", "error", "locked"):
        client.swarm.leave(force=True)
    addr = advertise_addr or default_advertise_address()
    client.swarm.init(advertise_addr=addr, listen_addr=f"{addr}:2377")
    new = swarm_state(client)
    if new is None:
        raise SwarmError(f"docker swarm init on {addr} did not leave the engine in an active swarm")
    ensure_job_isolation()
    return new


def remove_containers(containers) -> None:
    """Force-remove `containers`; one already gone (removed by its engine or another cleanup) is fine."""
    for c in containers:
        try:
            c.remove(force=True)
        except docker.errors.NotFound:
            pass


def create_job_network(client: docker.DockerClient, job_id: str, encrypted: bool = False) -> Network:
    """Create (or return the existing) attachable overlay of `job_id`. Needs a swarm manager.

    One at a time in this process: a subnet is picked from those no network
    uses yet, and a network counts as using one only once the swarm has
    allocated it (asynchronously), so two jobs prepared at once would pick
    the same /24 and the second would never be allocated. A network the
    swarm does not allocate (another process took its subnet) is removed and
    the next /24 tried.
    """
    name = job_network_name(job_id)
    with _CREATING:
        existing = [n for n in client.networks.list(names=[name]) if n.name == name]
        if existing:
            net = existing[0]
            if net.attrs.get("Labels", {}).get(JOB_LABEL) != job_id:
                raise SwarmError(f"network {name} exists but does not belong to job {job_id}; "
                                 "remove it or rename the job")
            return _wait_allocated(net)
        options = {"encrypted": "true"} if encrypted else {}
        unallocated = ""
        for subnet in _free_subnets(client):
            ipam = docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(subnet=str(subnet))])
            try:
                net = client.networks.create(name, driver="overlay", attachable=True, check_duplicate=True,
                                             ipam=ipam, options=options,
                                             labels={JOB_LABEL: job_id, MANAGED_LABEL: "true"})
            except docker.errors.APIError as exc:
                if "overlap" in str(exc).lower() or "pool" in str(exc).lower():
                    continue  # taken by a network created meanwhile: try the next one
                raise
            try:
                return _wait_allocated(net)
            except SwarmError as exc:
                unallocated = f" (the last: {exc})"
                net.remove()
        raise SwarmError(f"no free /24 left in the job network pool {JOB_POOL}{unallocated}; remove finished "
                         "jobs' networks (`scylla-singa swarm gc`)")


def _free_subnets(client: docker.DockerClient):
    """/24s of JOB_POOL no network of this engine uses, in order."""
    used = set()
    for net in client.api.networks():
        for cfg in (net.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet"):
                used.add(ipaddress.ip_network(cfg["Subnet"], strict=False))
    for subnet in JOB_POOL.subnets(new_prefix=24):
        if not any(subnet.overlaps(u) for u in used):
            yield subnet


def ensure_job_isolation(netns: str | None = None) -> None:
    """Install (once) the rule dropping traffic from docker_gwbridge to job overlays.

    `netns` names a network namespace (a cluster-in-a-box host) whose engine
    needs the rule too. Needs root and iptables; raises SwarmError otherwise.
    """
    prefix = ["nsenter", f"--net=/var/run/netns/{netns}"] if netns else []
    check = subprocess.run(prefix + ["iptables", "-C", *ISOLATION_RULE], capture_output=True)
    if check.returncode == 0:
        return
    # DOCKER-USER exists once dockerd has started; it is where Docker lets users filter.
    insert = subprocess.run(prefix + ["iptables", "-I", *ISOLATION_RULE], capture_output=True, text=True)
    if insert.returncode != 0:
        raise SwarmError(f"cannot install the job isolation rule (iptables -I {' '.join(ISOLATION_RULE)}): "
                         f"{insert.stderr.strip()}; run as root with iptables")


def _wait_allocated(net: Network, timeout_s: float = 15.0) -> Network:
    """Reload `net` until the swarm has given it a subnet (allocation is asynchronous)."""
    def allocated() -> bool:
        net.reload()
        return bool((net.attrs.get("IPAM") or {}).get("Config"))
    try:
        wait_until(allocated, timeout_s, f"the swarm to allocate a subnet to network {net.name}")
    except WaitTimeout as exc:
        raise SwarmError(str(exc)) from None
    return net


def remove_job_network(client: docker.DockerClient, job_id: str, timeout_s: float = 30.0) -> bool:
    """Remove the job's overlay and wait until it is gone; idempotent.

    Returns False if it was already gone. Removal fails while containers are
    still attached (their engines report endpoints for a short while after
    they stop), and a removed swarm network stays listed for a moment, so it
    retries until `timeout_s`, then raises SwarmError.
    """
    name = job_network_name(job_id)
    deadline = Deadline(timeout_s)
    removed = False
    while True:
        nets = [n for n in client.networks.list(names=[name]) if n.name == name]
        if not nets:
            return removed
        try:
            nets[0].remove()
            removed = True
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if deadline.passed():
                raise SwarmError(f"cannot remove network {name}: {exc.explanation}") from None
        # Swarm-scoped networks disappear asynchronously after a successful remove.
        if deadline.passed():
            raise SwarmError(f"network {name} was removed but is still listed after {timeout_s:.0f}s")
        time.sleep(0.2)


def job_networks(client: docker.DockerClient) -> list[Network]:
    """Every overlay network scylla-singa made, on this engine's view."""
    return client.networks.list(filters={"label": f"{MANAGED_LABEL}=true"})
