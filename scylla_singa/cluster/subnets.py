"""Finding /24s for a cluster-in-a-box that nothing on this machine uses yet.

Docker hands out whole /16s of 172.17-31 (and 192.168) round-robin to new
networks, so on a long-lived engine any of them may be taken; a cluster's
LAN and services subnets must overlap neither a route nor a Docker network.
Used by the tests and benchmarks that bring up clusters of their own.
"""

from __future__ import annotations

import ipaddress
import json
import random
import subprocess
from collections.abc import Iterable

import docker

Subnet = ipaddress.IPv4Network | ipaddress.IPv6Network


def used_subnets(host: docker.DockerClient) -> list[Subnet]:
    """Every routed prefix of this network namespace and every IPv4 subnet of the host engine's networks."""
    routes = json.loads(subprocess.run(["ip", "-j", "route", "show"], capture_output=True, text=True).stdout or "[]")
    used = [ipaddress.ip_network(r["dst"], strict=False) for r in routes if "/" in r.get("dst", "")]
    for net in host.networks.list():
        for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
            if cfg.get("Subnet", "").count(".") == 3:
                used.append(ipaddress.ip_network(cfg["Subnet"], strict=False))
    return used


def free_pair(host: docker.DockerClient, seconds: Iterable[int], thirds: range) -> tuple[str, str] | None:
    """Two neighbouring /24s free on this machine (see `pick_pair`), or None."""
    return pick_pair(used_subnets(host), seconds, thirds)


def pick_pair(used: list[Subnet], seconds: Iterable[int], thirds: range) -> tuple[str, str] | None:
    """Two neighbouring /24s 172.B.K.0/24 and 172.B.K+1.0/24 overlapping nothing in `used` (B from
    `seconds`, even K from `thirds`, tried in random order so parallel runs rarely race), or None."""
    evens = [k for k in thirds if k % 2 == 0]
    for b in seconds:
        for k in random.sample(evens, len(evens)):
            lan, svc = ipaddress.ip_network(f"172.{b}.{k}.0/24"), ipaddress.ip_network(f"172.{b}.{k + 1}.0/24")
            if not any(lan.overlaps(u) or svc.overlaps(u) for u in used):
                return str(lan), str(svc)
    return None
