"""Fairness orders for the allocator (Mesos's Sorter interface).

A sorter orders *clients* (roles, or frameworks within a role) by who should
be offered resources next. The allocator only talks to the `Sorter`
interface; `DRFSorter` (weighted Dominant Resource Fairness, the default) and
`FIFOSorter` (registration order) implement it. Sorters are pure: no I/O,
no clocks.

DRF keeps each client's allocation as a short list of floats, one per
scalar kind; a change of the cluster's totals (every agent added or
removed) marks every share stale and the heap is rebuilt once, at the next
pick; picking the next client is a heap pop, so one allocation round costs
O(agents x log clients), not O(agents x clients).
"""

from __future__ import annotations

import heapq
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping


class Sorter(ABC):
    """The fairness order over clients. Adding a present client or removing an absent one raises KeyError."""

    @abstractmethod
    def add(self, client: str, weight: float = 1.0) -> None:
        """Add an (active) client with no allocation."""

    @abstractmethod
    def remove(self, client: str) -> None:
        """Forget a client and its allocation."""

    @abstractmethod
    def activate(self, client: str) -> None:
        """Let the client be sorted/picked again (idempotent)."""

    @abstractmethod
    def deactivate(self, client: str) -> None:
        """Keep the client's allocation but never sort/pick it (idempotent)."""

    @abstractmethod
    def allocated(self, client: str, scalars: Mapping[str, float]) -> None:
        """Add scalar resources to the client's allocation."""

    @abstractmethod
    def unallocated(self, client: str, scalars: Mapping[str, float]) -> None:
        """Remove scalar resources from the client's allocation (never below zero)."""

    @abstractmethod
    def add_total(self, scalars: Mapping[str, float]) -> None:
        """Grow the pool the shares are computed against."""

    @abstractmethod
    def remove_total(self, scalars: Mapping[str, float]) -> None:
        """Shrink the pool the shares are computed against."""

    @abstractmethod
    def sort(self) -> list[str]:
        """Active clients, the one to offer to first at the front."""

    @abstractmethod
    def pick(self, eligible: Callable[[str], bool]) -> str | None:
        """The first client of `sort()` for which `eligible` is true, or None; cheaper than sort()."""

    @abstractmethod
    def allocation(self, client: str) -> dict[str, float]:
        """The client's allocated scalars."""

    @abstractmethod
    def __contains__(self, client: object) -> bool: ...

    @abstractmethod
    def __len__(self) -> int:
        """Number of clients (active or not)."""


class DRFSorter(Sorter):
    """Weighted DRF: order by max_k(allocated_k / total_k) / weight, ties by allocations made, then name."""

    def __init__(self) -> None:
        self._row: dict[str, int] = {}
        self._free_rows: list[int] = []
        self._kinds: dict[str, int] = {}
        # per row (client): allocated amount of each kind, weight, whether active
        self._alloc: list[list[float]] = []
        self._weight: list[float] = []
        self._active: list[bool] = []
        self._total: list[float] = []
        self._inv: list[float] = []    # 1 / total per kind (0 where the total is 0)
        self._count: dict[str, int] = {}
        self._version: dict[str, int] = {}
        self._heap: list[tuple[float, int, str, int]] = []
        self._seq = 0  # global, so a removed-then-re-added client never matches its old heap entries
        self._stale = True

    # ---- membership ---------------------------------------------------
    def add(self, client: str, weight: float = 1.0) -> None:
        if client in self._row:
            raise KeyError(f"client {client!r} already in the sorter")
        if self._free_rows:
            row = self._free_rows.pop()
        else:
            row = len(self._alloc)
            self._alloc.append([])
            self._weight.append(1.0)
            self._active.append(False)
        self._row[client] = row
        self._alloc[row] = [0.0] * len(self._kinds)
        self._weight[row] = float(weight) if weight > 0 else 1.0
        self._active[row] = True
        self._count[client] = 0
        self._version[client] = 0
        self._push(client)

    def remove(self, client: str) -> None:
        row = self._row.pop(client)
        self._active[row] = False
        self._alloc[row] = [0.0] * len(self._kinds)
        self._free_rows.append(row)
        del self._count[client], self._version[client]

    def activate(self, client: str) -> None:
        row = self._row[client]
        if not self._active[row]:
            self._active[row] = True
            self._push(client)

    def deactivate(self, client: str) -> None:
        self._active[self._row[client]] = False

    def set_weight(self, client: str, weight: float) -> None:
        self._weight[self._row[client]] = float(weight) if weight > 0 else 1.0
        self._stale = True

    # ---- allocations --------------------------------------------------
    def allocated(self, client: str, scalars: Mapping[str, float]) -> None:
        row = self._alloc[self._row[client]]
        for name, v in scalars.items():
            row[self._kind(name)] += v   # `row` is the same list after a new kind widened it
        self._count[client] += 1
        self._push(client)

    def unallocated(self, client: str, scalars: Mapping[str, float]) -> None:
        row = self._alloc[self._row[client]]
        for name, v in scalars.items():
            k = self._kind(name)
            left = row[k] - v
            row[k] = left if left > 0.0 else 0.0
        self._push(client)

    def allocation(self, client: str) -> dict[str, float]:
        row = self._alloc[self._row[client]]
        return {name: row[k] for name, k in self._kinds.items() if row[k] > 0}

    def add_total(self, scalars: Mapping[str, float]) -> None:
        for name, v in scalars.items():
            self._total[self._kind(name)] += v
        self._retotal()

    def remove_total(self, scalars: Mapping[str, float]) -> None:
        for name, v in scalars.items():
            k = self._kind(name)
            left = self._total[k] - v
            self._total[k] = left if left > 0.0 else 0.0
        self._retotal()

    def share(self, client: str) -> float:
        """The client's weighted dominant share."""
        return self._share(self._row[client])

    # ---- order --------------------------------------------------------
    def sort(self) -> list[str]:
        keyed = sorted((self._share(r), self._count[c], c) for c, r in self._row.items() if self._active[r])
        return [c for _, _, c in keyed]

    def pick(self, eligible: Callable[[str], bool]) -> str | None:
        if self._stale or len(self._heap) > 4 * len(self._row) + 64:
            self._rebuild()
        skipped: list[tuple[float, int, str, int]] = []
        found: str | None = None
        while self._heap:
            entry = heapq.heappop(self._heap)
            client, version = entry[2], entry[3]
            if self._version.get(client) != version or not self._active[self._row[client]]:
                continue  # stale entry: a newer one exists, or the client left
            skipped.append(entry)
            if eligible(client):
                found = client
                break
        for entry in skipped:
            heapq.heappush(self._heap, entry)
        return found

    def __contains__(self, client: object) -> bool:
        return client in self._row

    def __len__(self) -> int:
        return len(self._row)

    # ---- internals ----------------------------------------------------
    def _share(self, row: int) -> float:
        """max_k(allocated_k * (1 / total_k)) / weight, in Python floats.

        Why not numpy: this runs at every allocation and recovery (twice per task: the role's sorter
        and the roles' sorter), on a row of 3-5 numbers, where numpy's per-call overhead was most of
        the cost; sort() and the heap's rebuild use the same function, so their keys agree exactly."""
        best = 0.0
        for allocated, inverse in zip(self._alloc[row], self._inv):
            if allocated * inverse > best:
                best = allocated * inverse
        return best / self._weight[row]

    def _kind(self, name: str) -> int:
        k = self._kinds.get(name)
        return self._new_kind(name) if k is None else k

    def _new_kind(self, name: str) -> int:
        """A column for a scalar kind not seen before (every row, the totals and their inverses grow)."""
        k = self._kinds[name] = len(self._kinds)
        for row in self._alloc:
            row.append(0.0)
        self._total.append(0.0)
        self._inv.append(0.0)
        return k

    def _retotal(self) -> None:
        self._inv = [1.0 / t if t > 0 else 0.0 for t in self._total]
        self._stale = True  # every share changed: rebuild the heap once, lazily, at the next pick

    def _push(self, client: str) -> None:
        self._seq += 1
        self._version[client] = self._seq
        if not self._stale:
            heapq.heappush(self._heap, (self._share(self._row[client]), self._count[client], client, self._seq))

    def _rebuild(self) -> None:
        self._heap = [(self._share(r), self._count[c], c, self._version[c])
                      for c, r in self._row.items() if self._active[r]]
        heapq.heapify(self._heap)
        self._stale = False


class FIFOSorter(Sorter):
    """First come, first offered: clients in the order they were added, ignoring shares."""

    def __init__(self) -> None:
        self._clients: dict[str, dict[str, float]] = {}
        self._active: dict[str, bool] = {}

    def add(self, client: str, weight: float = 1.0) -> None:
        if client in self._clients:
            raise KeyError(f"client {client!r} already in the sorter")
        self._clients[client] = {}
        self._active[client] = True

    def remove(self, client: str) -> None:
        del self._clients[client], self._active[client]

    def activate(self, client: str) -> None:
        if client not in self._clients:
            raise KeyError(client)
        self._active[client] = True

    def deactivate(self, client: str) -> None:
        if client not in self._clients:
            raise KeyError(client)
        self._active[client] = False

    def allocated(self, client: str, scalars: Mapping[str, float]) -> None:
        alloc = self._clients[client]
        for k, v in scalars.items():
            alloc[k] = alloc.get(k, 0.0) + v

    def unallocated(self, client: str, scalars: Mapping[str, float]) -> None:
        alloc = self._clients[client]
        for k, v in scalars.items():
            alloc[k] = max(0.0, alloc.get(k, 0.0) - v)

    def allocation(self, client: str) -> dict[str, float]:
        return {k: v for k, v in self._clients[client].items() if v > 0}

    def add_total(self, scalars: Mapping[str, float]) -> None:
        pass

    def remove_total(self, scalars: Mapping[str, float]) -> None:
        pass

    def sort(self) -> list[str]:
        return [c for c in self._clients if self._active[c]]

    def pick(self, eligible: Callable[[str], bool]) -> str | None:
        return next((c for c in self._clients if self._active[c] and eligible(c)), None)

    def __contains__(self, client: object) -> bool:
        return client in self._clients

    def __len__(self) -> int:
        return len(self._clients)


SORTERS: dict[str, Callable[[], Sorter]] = {"drf": DRFSorter, "fifo": FIFOSorter}
