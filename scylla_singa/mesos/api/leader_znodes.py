"""Where the leading master is published: ZooKeeper znodes `json.info_<seq>`, Mesos's way.

Every master creates an ephemeral sequential znode `json.info_<seq>` under
the path of its `zk://` URL holding its MasterInfo as JSON; the lowest
sequence leads. That is where pymesos's detector looks (it takes the
lowest child other than `log_replicas` and reads `address.ip` /
`address.port`), so frameworks and agents given `zk://host:2181/mesos` find
the leading master. The master's side (contending) is
mesos/master/election.py; this module is the reading side and the rules
both share.
"""

from __future__ import annotations

import json
from typing import Any

NODE_PREFIX = "json.info_"


def address_of(info: dict[str, Any]) -> str | None:
    """ "ip:port" from a MasterInfo's `address` (what pymesos reads), or None."""
    addr = info.get("address") or {}
    ip, port = addr.get("ip") or addr.get("hostname"), addr.get("port")
    return f"{ip}:{port}" if ip and port else None


def parse_zk_url(url: str) -> tuple[str, str]:
    """("h1:2181,h2:2181", "/mesos") from "zk://h1:2181,h2:2181/mesos"; ValueError if not zk://."""
    if not url.startswith(("zk://", "zoo://")):
        raise ValueError(f"not a zk:// URL: {url!r}")
    rest = url.split("://", 1)[1]
    hosts, _, path = rest.partition("/")
    if "@" in hosts:
        hosts = hosts.rsplit("@", 1)[1]
    if not hosts:
        raise ValueError(f"zk URL {url!r} names no server")
    return hosts, "/" + path.strip("/")


def choose_leader(children: list[str]) -> str | None:
    """The leading znode among `children`, by pymesos's rule (lowest name, ignoring log_replicas)."""
    candidates = [c for c in children if c != "log_replicas"]
    return min(candidates) if candidates else None


def kazoo_client(hosts: str) -> Any:
    from kazoo.client import KazooClient
    return KazooClient(hosts=hosts)


def resolve_zk_leader(url: str, timeout: float = 10.0) -> str:
    """The leading master's "ip:port" from ZooKeeper (pymesos's rule); ValueError when none."""
    hosts, path = parse_zk_url(url)
    client = kazoo_client(hosts)
    client.start(timeout=timeout)
    try:
        leader = choose_leader(client.get_children(path))
        if leader is None:
            raise ValueError(f"no master registered under {url}")
        data, _ = client.get(f"{path}/{leader}")
        address = address_of(json.loads(data.decode()))
        if not address:
            raise ValueError(f"leader znode {leader} under {url} has no address")
        return address
    finally:
        client.stop()
        client.close()
