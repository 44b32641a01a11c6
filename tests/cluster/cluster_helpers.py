"""Helpers shared by the cluster tests (a module of its own: conftest is not importable by name)."""

from __future__ import annotations

import ipaddress
import json
import random
import subprocess
import uuid

import docker

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.discover import leftovers
from scylla_singa.cluster.state import ClusterInfo


def node_client(info: ClusterInfo, index: int) -> docker.DockerClient:
    """A client of node `index`'s own Docker engine."""
    return docker.DockerClient(base_url=info.nodes[index].docker_host, timeout=120)


def assert_clean(config: ClusterConfig, host: docker.DockerClient) -> None:
    """Nothing of the cluster is left on the machine (namespaces, links, rules, processes, ...)."""
    left = leftovers(config, host)
    assert not left, f"cluster {config.prefix!r} left behind: {left}"


def unique_prefix(tag: str = "t") -> str:
    """A cluster prefix no other test session on this machine uses (they may run at the same time)."""
    return f"{tag}{uuid.uuid4().hex[:5]}"


def free_subnet_pair(host: docker.DockerClient) -> tuple[str, str]:
    """Two neighbouring /24s that no route and no Docker network of the host overlaps.

    Docker hands out whole /16s of 172.17-31 round-robin, so any of them may be
    taken (by other tests' compose projects) while this session runs: try
    172.31.200+ first, then the same /24s in the other /16s cluster configs allow.
    """
    routes = json.loads(subprocess.run(["ip", "-j", "route", "show"], capture_output=True, text=True).stdout or "[]")
    used = [ipaddress.ip_network(r["dst"], strict=False) for r in routes if "/" in r.get("dst", "")]
    for net in host.networks.list():
        for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet", "").count(".") == 3:
                used.append(ipaddress.ip_network(cfg["Subnet"], strict=False))
    seconds = [31] + random.sample([16, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], 12)
    for b in seconds:
        for k in random.sample(range(200, 254, 2), 27):
            lan, svc = ipaddress.ip_network(f"172.{b}.{k}.0/24"), ipaddress.ip_network(f"172.{b}.{k + 1}.0/24")
            if not any(lan.overlaps(u) or svc.overlaps(u) for u in used):
                return str(lan), str(svc)
    raise RuntimeError("no free pair of /24s in 172.16.0.0/12 for a test cluster")
