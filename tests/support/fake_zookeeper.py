"""A stand-in for kazoo's KazooClient, for unit tests of the code around ZooKeeper (elections, leader lookups)."""

from __future__ import annotations


class FakeZK:
    """Just enough of KazooClient for the elector and the leader lookup: sequential ephemeral nodes, children
    and a children watch."""

    def __init__(self, hosts: str) -> None:
        self.hosts = hosts
        self.nodes: dict[str, bytes] = {}
        self.seq = 0
        self.watchers = []
        self.started = False

    def start(self, timeout: float) -> None:
        self.started = True

    def ensure_path(self, path: str) -> None:
        pass

    def create(self, path: str, value: bytes, ephemeral: bool, sequence: bool) -> str:
        assert ephemeral and sequence
        self.seq += 1
        name = f"{path}{self.seq:010d}"
        self.nodes[name] = value
        self._fire()
        return name

    def delete(self, path: str) -> None:
        self.nodes.pop(path, None)
        self._fire()

    def get(self, path: str):
        return self.nodes[path], None

    def get_children(self, path: str) -> list[str]:
        return self._children(path)

    def ChildrenWatch(self, path: str, fn):  # noqa: N802 - kazoo's name
        self.watchers.append((path, fn))
        fn(self._children(path))

    def _children(self, path: str) -> list[str]:
        return [n.rsplit("/", 1)[1] for n in self.nodes if n.startswith(path + "/")]

    def _fire(self) -> None:
        for path, fn in self.watchers:
            fn(self._children(path))

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        pass
