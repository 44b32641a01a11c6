"""Leader election for masters: a small interface, a standalone elector and a ZooKeeper one.

The ZooKeeper elector is Mesos's contender/detector: every master creates an
ephemeral sequential znode `json.info_<seq>` under the path of its `zk://`
URL holding its MasterInfo as JSON; the lowest sequence leads. That is where
pymesos's detector looks (it takes the lowest child other than
`log_replicas` and reads `address.ip` / `address.port`), so frameworks given
`zk://host:2181/mesos` find the leading master.

A master leads when *its own* znode is the lowest. A lower znode holding the
same address belongs to a former run of this master that died less than a
session timeout ago: until ZooKeeper ends that session nobody leads (the
elector reports None), rather than this master taking the lead while every
detector still sees the old znode.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

NODE_PREFIX = "json.info_"
OnChange = Callable[[str | None], None]   # the leader's "host:port", or None when none is known


class LeaderElector(ABC):
    """Tells a master whether it leads and where the leader is."""

    @abstractmethod
    def start(self, me: dict[str, Any], on_change: OnChange) -> None:
        """Contend with MasterInfo `me`; `on_change(leader)` is called (from any thread) on every change."""

    @abstractmethod
    def stop(self) -> None:
        """Withdraw (idempotent)."""


class StandaloneElector(LeaderElector):
    """One master, always the leader."""

    def start(self, me: dict[str, Any], on_change: OnChange) -> None:
        on_change(address_of(me))

    def stop(self) -> None:
        pass


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


class ZooKeeperElector(LeaderElector):
    """Mesos-style election over ZooKeeper with kazoo (`client_factory` is injectable for tests)."""

    def __init__(self, url: str, client_factory: Callable[[str], Any] | None = None,
                 timeout: float = 10.0) -> None:
        self.hosts, self.path = parse_zk_url(url)
        self._factory = client_factory or _kazoo_client
        self._timeout = timeout
        self._client: Any = None
        self._node: str | None = None
        self._me: str | None = None
        self._on_change: OnChange | None = None
        self._last: Any = object()
        self._lock = threading.Lock()

    def start(self, me: dict[str, Any], on_change: OnChange) -> None:
        self._on_change = on_change
        self._me = address_of(me)
        self._client = self._factory(self.hosts)
        self._client.start(timeout=self._timeout)
        self._client.ensure_path(self.path)
        created = self._client.create(f"{self.path}/{NODE_PREFIX}", json.dumps(me).encode(),
                                      ephemeral=True, sequence=True)
        self._node = created.rsplit("/", 1)[-1]
        self._client.ChildrenWatch(self.path, self._children)

    @property
    def node(self) -> str | None:
        """Our znode's name (json.info_<seq>) once contending."""
        return self._node

    def _children(self, children: list[str]) -> bool:
        if self._client is None:
            return False  # stopped: end the watch
        leader = choose_leader(children)
        address = None
        if leader is not None:
            try:
                data, _ = self._client.get(f"{self.path}/{leader}")
                address = address_of(json.loads(data.decode()))
            except Exception:  # noqa: BLE001 - a vanished node or bad JSON: no leader known
                address = None
            if leader != self._node and address == self._me:
                address = None  # a dead former run of this master, until its session ends
        with self._lock:
            if address != self._last and self._on_change:
                self._last = address
                self._on_change(address)
        return self._client is not None

    def stop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                if self._node:
                    client.delete(f"{self.path}/{self._node}")
            except Exception:  # noqa: BLE001 - the session may be gone already
                pass
            client.stop()
            client.close()


def _kazoo_client(hosts: str) -> Any:
    from kazoo.client import KazooClient
    return KazooClient(hosts=hosts)


def resolve_zk_leader(url: str, timeout: float = 10.0) -> str:
    """The leading master's "ip:port" from ZooKeeper (pymesos's rule); ValueError when none."""
    hosts, path = parse_zk_url(url)
    client = _kazoo_client(hosts)
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
