"""Free /24 pairs skip what Docker networks already hold (the host engine is a stand-in here)."""

from __future__ import annotations

import ipaddress
from types import SimpleNamespace

from scylla_singa.cluster import subnets


class Host:
    def __init__(self, *held: str) -> None:
        self.networks = SimpleNamespace(list=lambda: [SimpleNamespace(attrs={"IPAM": {"Config": [{"Subnet": s}]}})
                                                      for s in held])


def test_a_pair_overlapping_a_docker_network_or_a_route_is_never_chosen() -> None:
    host = Host("172.31.150.0/23", "172.31.154.0/24", "fd00::/64")
    used = subnets.used_subnets(host)  # the stand-in's networks and this machine's real routes
    for _ in range(20):
        pair = subnets.free_pair(host, [31], range(150, 170))
        assert pair is not None
        lan, svc = (ipaddress.ip_network(p) for p in pair)
        assert svc.network_address == lan.broadcast_address + 1 and int(str(lan).split(".")[2]) in range(152, 170)
        assert not any(n.overlaps(u) for n in (lan, svc) for u in used)


def test_no_pair_left_is_none() -> None:
    assert subnets.free_pair(Host("172.31.0.0/16"), [31], range(150, 198)) is None
