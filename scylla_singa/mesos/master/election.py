"""Leader election for masters: a small interface, a standalone elector and a ZooKeeper one.

The ZooKeeper elector is Mesos's contender: every master creates an
ephemeral sequential znode (mesos/api/leader_znodes.py) holding its
MasterInfo; the lowest sequence leads.

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

from scylla_singa.mesos.api.leader_znodes import NODE_PREFIX, address_of, choose_leader, kazoo_client, parse_zk_url

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


class ZooKeeperElector(LeaderElector):
    """Mesos-style election over ZooKeeper with kazoo (`client_factory` is injectable for tests)."""

    def __init__(self, url: str, client_factory: Callable[[str], Any] | None = None,
                 timeout: float = 10.0) -> None:
        self.hosts, self.path = parse_zk_url(url)
        self._factory = client_factory or kazoo_client
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
