"""Free /24 pairs for clusters skip every subnet already in use (routes and Docker networks)."""

from __future__ import annotations

import ipaddress
from types import SimpleNamespace

from scylla_singa.cluster import subnets

USED = [ipaddress.ip_network(n) for n in ("172.31.150.0/23", "172.31.154.0/24", "fd00::/64")]


def test_a_pair_overlapping_a_used_subnet_is_never_chosen() -> None:
    for _ in range(50):  # the order of tries is random
        pair = subnets.pick_pair(USED, [31], range(150, 158))
        assert pair in {("172.31.152.0/24", "172.31.153.0/24"), ("172.31.156.0/24", "172.31.157.0/24")}


def test_no_pair_left_is_none() -> None:
    assert subnets.pick_pair([ipaddress.ip_network("172.31.0.0/16")], [31], range(150, 198)) is None


def test_the_docker_networks_of_the_host_count_as_used() -> None:
    host = SimpleNamespace(networks=SimpleNamespace(list=lambda: [
        SimpleNamespace(attrs={"IPAM": {"Config": [{"Subnet": "172.31.150.0/24"}, {"Subnet": "fd01::/64"}]}}),
        SimpleNamespace(attrs={"IPAM": None})]))
    used = subnets.used_subnets(host)
    assert ipaddress.ip_network("172.31.150.0/24") in used
    assert all(isinstance(n, ipaddress.IPv4Network | ipaddress.IPv6Network) for n in used)
