"""The allocation module: who is offered which agent's free resources.

Pure (no I/O, no clock of its own: callers pass `now`), so it can be driven
and benchmarked alone. Mesos's hierarchical allocator: each round walks the
agents that have allocatable free resources (shuffled), and offers *all* of
an agent's free resources to the first framework in fairness order (roles
first, then frameworks within the role, each order a `Sorter`) that is
active, not suppressed and not filtering that agent. Offered resources count
as allocated until they are recovered (declined, rescinded, or freed by a
finished task).

Filters (DECLINE/ACCEPT `refuse_seconds`) follow Mesos: a framework is not
offered an agent again while the filter lasts *and* the agent's free
resources are a subset of what it refused; when more resources free up on
the agent, filters that no longer cover them are dropped.

Quota (quota.py): once a role has a guarantee or a limit, each round
also tracks what the roles with quota hold and the headroom their unmet
guarantees need (_QuotaRound); offers are cut to fit, so an agent's
resources may go to several frameworks over successive rounds.

Reservations (resources.py keeps a reserved resource under its own
qualified name): an agent's resources reserved for a role are offered only
to that role's frameworks, with the unreserved ones; sorters and quotas
count them by their resource names. RESERVE/UNRESERVE replace resources
in place (`convert`).

Per-round cost: O(available agents x log frameworks) plus the filters that
expire; nothing proportional to past offers or tasks (with quota, plus one
pass over the agents per round).
"""

from __future__ import annotations

import heapq
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from scylla_singa.mesos.api.resources import Resources
from .quota import Quota, add_amounts, cap, sum_amounts, unmet, within_limits
from .sorter import SORTERS, Sorter

MAX_REFUSE_S = 365 * 86400.0


@dataclass(frozen=True)
class Grant:
    """Resources of one agent offered to one framework."""

    framework_id: str
    agent_id: str
    resources: Resources


class Allocator(ABC):
    """The allocation-module interface the master drives (Mesos's Allocator, trimmed)."""

    @abstractmethod
    def add_framework(self, framework_id: str, role: str = "*", active: bool = True) -> None: ...

    @abstractmethod
    def remove_framework(self, framework_id: str) -> None:
        """Forget the framework; its allocations on agents return to the free pool."""

    @abstractmethod
    def set_capabilities(self, framework_id: str, takes_shared: bool, takes_refined: bool) -> None:
        """Whether the framework may be offered shared persistent volumes (capability SHARED_RESOURCES) and
        refined reservations (RESERVATION_REFINEMENT)."""

    @abstractmethod
    def activate_framework(self, framework_id: str) -> None: ...

    @abstractmethod
    def deactivate_framework(self, framework_id: str) -> None: ...

    @abstractmethod
    def suppress(self, framework_id: str) -> None:
        """Stop offering to the framework until `revive`."""

    @abstractmethod
    def revive(self, framework_id: str) -> None:
        """Offer to the framework again and clear all its filters."""

    @abstractmethod
    def unsuppress(self, framework_id: str) -> None:
        """Offer to the framework again, keeping its filters (UPDATE_FRAMEWORK without its role in
        suppressed_roles: Mesos's unsuppress, which unlike REVIVE leaves DECLINE filters in place)."""

    @abstractmethod
    def change_role(self, framework_id: str, role: str) -> None:
        """Move the framework, with everything it holds, to another role (its FrameworkInfo changed role)."""

    @abstractmethod
    def add_agent(self, agent_id: str, total: Resources,
                  used: Mapping[str, Resources] | None = None) -> None:
        """Add an agent; `used` is what tasks of (already added) frameworks hold there."""

    @abstractmethod
    def remove_agent(self, agent_id: str) -> None: ...

    @abstractmethod
    def activate_agent(self, agent_id: str) -> None: ...

    @abstractmethod
    def deactivate_agent(self, agent_id: str) -> None:
        """Keep the agent's accounting but offer nothing from it (disconnected)."""

    @abstractmethod
    def allocate_used(self, framework_id: str, agent_id: str, resources: Resources) -> None:
        """Count resources as held by the framework on the agent (a recovered task)."""

    @abstractmethod
    def recover(self, framework_id: str, agent_id: str, resources: Resources,
                refuse_seconds: float | None = None, now: float = 0.0) -> None:
        """Return resources to the free pool; a refusal adds a filter until now + refuse_seconds."""

    @abstractmethod
    def convert(self, agent_id: str, before: Resources, after: Resources, framework_id: str | None = None) -> None:
        """Replace `before` by `after` on the agent (a RESERVE or UNRESERVE: the same amounts, other
        reservations): in the framework's allocation when it came from an offer, else in the free pool.
        The caller has checked that `before` is there."""

    @abstractmethod
    def allocate(self, now: float) -> list[Grant]:
        """One allocation round."""

    @abstractmethod
    def free(self, agent_id: str) -> Resources:
        """What of the agent is neither offered nor used."""

    @abstractmethod
    def set_role_weight(self, role: str, weight: float) -> None: ...

    @abstractmethod
    def set_quota(self, role: str, quota: Quota | None) -> None:
        """Give the role a quota (None or the default quota: none); later rounds offer within it."""

    @abstractmethod
    def role_allocation(self, role: str) -> dict[str, float]:
        """What the role holds now (tasks and outstanding offers), scalar by scalar."""

    def filter_count(self, framework_id: str, now: float) -> int:
        """How many agents the framework filters now (for metrics; 0 when not kept)."""
        return 0

    def is_suppressed(self, framework_id: str) -> bool:
        """Whether the framework suppressed its offers (for metrics; False when not kept)."""
        return False


@dataclass
class _Agent:
    total: Resources
    free: Resources
    allocated: dict[str, Resources] = field(default_factory=dict)
    active: bool = True


@dataclass
class _Framework:
    role: str
    active: bool = True
    suppressed: bool = False
    takes_shared: bool = False   # the capability SHARED_RESOURCES: it may be offered shared persistent volumes
    takes_refined: bool = False   # RESERVATION_REFINEMENT: it may be offered refined reservations


class HierarchicalAllocator(Allocator):
    """Roles, then frameworks within a role, each ordered by a Sorter (DRF by default)."""

    def __init__(self, sorter: Callable[[], Sorter] | str = "drf", seed: int | None = None) -> None:
        self._new_sorter = SORTERS[sorter] if isinstance(sorter, str) else sorter
        self._agents: dict[str, _Agent] = {}
        self._frameworks: dict[str, _Framework] = {}
        self._roles = self._new_sorter()
        self._role_sorters: dict[str, Sorter] = {}
        self._role_weights: dict[str, float] = {}
        self._available: dict[str, None] = {}   # agents whose free resources may be allocatable
        self._filters: dict[str, dict[str, tuple[float, Resources]]] = {}  # agent -> fw -> (expiry, refused)
        self._expiry: list[tuple[float, str, str]] = []
        self._offerable: set[str] = set()       # active, not suppressed frameworks
        self._total = Resources()
        self._rng = random.Random(seed)
        self._quotas: dict[str, Quota] = {}   # roles with a guarantee or a limit (none: the fast path)

    # ---- frameworks ---------------------------------------------------
    def add_framework(self, framework_id: str, role: str = "*", active: bool = True) -> None:
        if framework_id in self._frameworks:
            raise KeyError(f"framework {framework_id} already added")
        self._frameworks[framework_id] = _Framework(role, active)
        self._join_role(framework_id, role)
        if not active:
            self._role_sorters[role].deactivate(framework_id)
        self._refresh(framework_id)

    def set_capabilities(self, framework_id: str, takes_shared: bool, takes_refined: bool) -> None:
        fw = self._frameworks[framework_id]
        fw.takes_shared, fw.takes_refined = takes_shared, takes_refined

    def remove_framework(self, framework_id: str) -> None:
        fw = self._frameworks.pop(framework_id)
        for agent_id, agent in self._agents.items():
            held = agent.allocated.pop(framework_id, None)
            if held:
                self._roles.unallocated(fw.role, held.amounts)
                self._add_free(agent_id, agent, held)
            self._filters.get(agent_id, {}).pop(framework_id, None)
        sorter = self._role_sorters[fw.role]
        sorter.remove(framework_id)
        if not len(sorter):
            del self._role_sorters[fw.role]
            self._roles.remove(fw.role)
        self._offerable.discard(framework_id)

    def activate_framework(self, framework_id: str) -> None:
        self._frameworks[framework_id].active = True
        self._refresh(framework_id)

    def deactivate_framework(self, framework_id: str) -> None:
        self._frameworks[framework_id].active = False
        self._refresh(framework_id)

    def suppress(self, framework_id: str) -> None:
        self._frameworks[framework_id].suppressed = True
        self._refresh(framework_id)

    def revive(self, framework_id: str) -> None:
        self._frameworks[framework_id].suppressed = False
        for agent_id, flt in self._filters.items():
            if flt.pop(framework_id, None) is not None and self._agents[agent_id].active:
                self._available[agent_id] = None
        self._refresh(framework_id)

    def unsuppress(self, framework_id: str) -> None:
        fw = self._frameworks[framework_id]
        if fw.suppressed:
            fw.suppressed = False
            for agent_id, agent in self._agents.items():
                if agent.active:
                    self._available[agent_id] = None
            self._refresh(framework_id)

    def change_role(self, framework_id: str, role: str) -> None:
        fw = self._frameworks[framework_id]
        if fw.role == role:
            return
        held = self.allocation(framework_id)
        old = self._role_sorters[fw.role]
        old.remove(framework_id)
        self._roles.unallocated(fw.role, held.amounts)
        if not len(old):
            del self._role_sorters[fw.role]
            self._roles.remove(fw.role)
        fw.role = role
        self._join_role(framework_id, role)
        self._role_sorters[role].allocated(framework_id, held.amounts)
        self._roles.allocated(role, held.amounts)
        self._refresh(framework_id)

    def _join_role(self, framework_id: str, role: str) -> None:
        """Put the framework in its role's sorter, making the role's sorter when it is the role's first."""
        if role not in self._role_sorters:
            sorter = self._new_sorter()
            sorter.add_total(self._total.amounts)
            self._role_sorters[role] = sorter
            self._roles.add(role, self._role_weights.get(role, 1.0))
        self._role_sorters[role].add(framework_id)

    def set_quota(self, role: str, quota: Quota | None) -> None:
        if quota is None or quota.is_default:
            self._quotas.pop(role, None)
        else:
            self._quotas[role] = quota
        for agent_id, agent in self._agents.items():   # a raised limit may make idle resources offerable
            if agent.active:
                self._available[agent_id] = None

    def role_allocation(self, role: str) -> dict[str, float]:
        return dict(self._roles.allocation(role)) if role in self._roles else {}

    def set_role_weight(self, role: str, weight: float) -> None:
        self._role_weights[role] = weight
        if role in self._roles and hasattr(self._roles, "set_weight"):
            self._roles.set_weight(role, weight)

    def _refresh(self, framework_id: str) -> None:
        fw = self._frameworks[framework_id]
        sorter = self._role_sorters[fw.role]
        if fw.active and not fw.suppressed:
            self._offerable.add(framework_id)
            sorter.activate(framework_id)
        else:
            self._offerable.discard(framework_id)
            sorter.deactivate(framework_id)

    # ---- agents -------------------------------------------------------
    def add_agent(self, agent_id: str, total: Resources,
                  used: Mapping[str, Resources] | None = None) -> None:
        if agent_id in self._agents:
            raise KeyError(f"agent {agent_id} already added")
        agent = _Agent(total, total)
        self._agents[agent_id] = agent
        self._change_total(total, +1)
        for fw_id, res in (used or {}).items():
            self.allocate_used(fw_id, agent_id, res)
        self._available[agent_id] = None

    def remove_agent(self, agent_id: str) -> None:
        agent = self._agents.pop(agent_id)
        for fw_id, held in agent.allocated.items():
            fw = self._frameworks.get(fw_id)
            if fw:
                self._role_sorters[fw.role].unallocated(fw_id, held.amounts)
                self._roles.unallocated(fw.role, held.amounts)
        self._change_total(agent.total, -1)
        self._available.pop(agent_id, None)
        self._filters.pop(agent_id, None)

    def activate_agent(self, agent_id: str) -> None:
        self._agents[agent_id].active = True
        self._available[agent_id] = None

    def deactivate_agent(self, agent_id: str) -> None:
        self._agents[agent_id].active = False
        self._available.pop(agent_id, None)

    def allocate_used(self, framework_id: str, agent_id: str, resources: Resources) -> None:
        agent = self._agents[agent_id]
        fw = self._frameworks[framework_id]
        agent.free = agent.free - resources
        agent.allocated[framework_id] = agent.allocated.get(framework_id, Resources()) + resources
        amounts = resources.amounts
        self._role_sorters[fw.role].allocated(framework_id, amounts)
        self._roles.allocated(fw.role, amounts)

    def recover(self, framework_id: str, agent_id: str, resources: Resources,
                refuse_seconds: float | None = None, now: float = 0.0) -> None:
        agent = self._agents.get(agent_id)
        if agent is None or resources.is_empty():
            return
        held = agent.allocated.get(framework_id, Resources())
        back = resources if held.contains(resources) else _intersect(held, resources)
        rest = held - back
        if rest.is_empty():
            agent.allocated.pop(framework_id, None)
        else:
            agent.allocated[framework_id] = rest
        fw = self._frameworks.get(framework_id)
        if fw is not None:
            amounts = back.amounts
            self._role_sorters[fw.role].unallocated(framework_id, amounts)
            self._roles.unallocated(fw.role, amounts)
            if refuse_seconds and refuse_seconds > 0:
                expiry = now + min(refuse_seconds, MAX_REFUSE_S)
                self._filters.setdefault(agent_id, {})[framework_id] = (expiry, back)
                heapq.heappush(self._expiry, (expiry, agent_id, framework_id))
        self._add_free(agent_id, agent, back)

    def convert(self, agent_id: str, before: Resources, after: Resources, framework_id: str | None = None) -> None:
        agent = self._agents[agent_id]
        agent.total = agent.total - before + after
        self._total = self._total - before + after
        if framework_id is None:
            agent.free = agent.free - before
            self._add_free(agent_id, agent, after)
        else:
            agent.allocated[framework_id] = agent.allocated.get(framework_id, Resources()) - before + after

    def _add_free(self, agent_id: str, agent: _Agent, back: Resources) -> None:
        agent.free = agent.free + back
        flt = self._filters.get(agent_id)
        if flt:  # filters only hold while the agent's free resources are within what was refused
            for fw_id in [f for f, (_, refused) in flt.items() if not refused.contains(agent.free)]:
                del flt[fw_id]
        if agent.active:
            self._available[agent_id] = None

    def _change_total(self, res: Resources, sign: int) -> None:
        self._total = self._total + res if sign > 0 else self._total - res
        for sorter in (self._roles, *self._role_sorters.values()):
            (sorter.add_total if sign > 0 else sorter.remove_total)(res.amounts)

    # ---- the round ----------------------------------------------------
    def allocate(self, now: float) -> list[Grant]:
        self._expire(now)
        if not self._offerable or not self._available:
            return []
        order = list(self._available)
        self._rng.shuffle(order)
        grants: list[Grant] = []
        quota = _QuotaRound(self) if self._quotas else None
        for agent_id in order:
            agent = self._agents[agent_id]
            if not agent.free.allocatable():
                del self._available[agent_id]
                continue
            if quota is None:
                fw_id, offered = self._pick_for(agent.free, self._filters.get(agent_id))
            else:
                fw_id, offered = quota.pick(agent.free, self._filters.get(agent_id))
            if fw_id is None:
                continue  # everybody filters this agent (or is at its quota): it stays available for later rounds
            if offered.has_reservations():   # shared volumes, refinements: only to frameworks that take them
                fw = self._frameworks[fw_id]
                if not fw.takes_shared:
                    offered = offered.without_shared()
                if not fw.takes_refined:
                    offered = offered - offered.refined()
                if not offered.allocatable():
                    continue
            grants.append(Grant(fw_id, agent_id, offered))
            self.allocate_used(fw_id, agent_id, offered)
            if quota is not None:
                quota.granted(self._frameworks[fw_id].role, offered)
            if not agent.free.allocatable():   # a quota may have cut the offer: the rest stays offerable
                del self._available[agent_id]
        return grants

    def _pick_for(self, free: Resources, flt: dict[str, tuple[float, Resources]] | None) -> tuple[str | None,
                                                                                                 Resources]:
        """The framework offered an agent's `free` resources, and what it is offered: everything, unless
        some are reserved, when a framework gets the unreserved ones and its own role's reservations."""
        if not free.has_reservations():
            return self._pick(flt), free
        fw_id = self._pick(flt, lambda role: free.offerable_to(role).allocatable())
        return fw_id, (free if fw_id is None else free.offerable_to(self._frameworks[fw_id].role))

    def _pick(self, flt: dict[str, tuple[float, Resources]] | None,
              role_ok: Callable[[str], bool] | None = None) -> str | None:
        offerable = self._offerable
        if flt and len(flt) >= len(offerable) and offerable <= flt.keys():
            return None

        def eligible(fw_id: str) -> bool:
            return fw_id in offerable and not (flt and fw_id in flt)

        chosen: list[str] = []

        def role_has_one(role: str) -> bool:
            if role_ok is not None and not role_ok(role):
                return False
            fw_id = self._role_sorters[role].pick(eligible)
            if fw_id is not None:
                chosen.append(fw_id)
            return fw_id is not None

        return chosen[-1] if self._roles.pick(role_has_one) else None

    def _expire(self, now: float) -> None:
        while self._expiry and self._expiry[0][0] <= now:
            expiry, agent_id, fw_id = heapq.heappop(self._expiry)
            flt = self._filters.get(agent_id)
            if flt and fw_id in flt and flt[fw_id][0] <= now:
                del flt[fw_id]
                if agent_id in self._agents and self._agents[agent_id].active:
                    self._available[agent_id] = None

    # ---- views (for the master's state and the tests) -----------------
    def free(self, agent_id: str) -> Resources:
        return self._agents[agent_id].free

    def allocation(self, framework_id: str) -> Resources:
        out = Resources()
        for agent in self._agents.values():
            out = out + agent.allocated.get(framework_id, Resources())
        return out

    def filter_count(self, framework_id: str, now: float) -> int:
        """How many agents the framework filters now (the allocator's offer_filters metric)."""
        return sum(1 for flt in self._filters.values() if framework_id in flt and flt[framework_id][0] > now)

    def is_suppressed(self, framework_id: str) -> bool:
        fw = self._frameworks.get(framework_id)
        return fw is not None and fw.suppressed

    def filtered(self, framework_id: str, agent_id: str, now: float) -> bool:
        f = self._filters.get(agent_id, {}).get(framework_id)
        return f is not None and f[0] > now

    def order(self) -> list[str]:
        """Offerable frameworks in fairness order (roles first)."""
        return [fw for role in self._roles.sort() for fw in self._role_sorters[role].sort()
                if fw in self._offerable]


class _QuotaRound:
    """One allocation round's quota bookkeeping (only when some role has a quota): what each role with a
    quota holds, the unallocated resources, and the headroom, i.e. what the unmet guarantees still need.

    A role below a guarantee is offered first (stage 1), the others after (stage 2). Either way an offer
    is cut to the role's limits, and to its own unmet guarantee plus what the unallocated resources hold
    beyond the headroom, so no offer eats into another role's guarantee.
    """

    def __init__(self, allocator: HierarchicalAllocator) -> None:
        self.a = allocator
        # As Mesos counts it: a role consumes what it holds and its reservations nobody uses. Reserved
        # resources are offered to their role whatever its quota, and never count as unallocated for others.
        self.consumed = {role: allocator.role_allocation(role) for role in allocator._quotas}
        free = [agent.free for agent in allocator._agents.values() if agent.active]
        for res in free:
            if res.has_reservations():
                for role, reserved in res.by_role().items():
                    if role in self.consumed:
                        add_amounts(self.consumed[role], reserved.amounts)
        self.headroom = sum_amounts(unmet(q, self.consumed[r]) for r, q in allocator._quotas.items())
        self.unallocated = sum_amounts(_unreserved(res).amounts for res in free)
        self._offers: dict[str, Resources] = {}

    def pick(self, free: Resources, flt: dict[str, tuple[float, Resources]] | None) -> tuple[str | None, Resources]:
        self._offers.clear()
        fw_id = self.a._pick(flt, lambda role: self._offerable(role, free, first=True))
        if fw_id is None:
            fw_id = self.a._pick(flt, lambda role: self._offerable(role, free, first=False))
        return (None, free) if fw_id is None else (fw_id, self._offers[self.a._frameworks[fw_id].role])

    def _offerable(self, role: str, free: Resources, first: bool) -> bool:
        quota = self.a._quotas.get(role)
        lacking = unmet(quota, self.consumed[role]) if quota is not None else {}
        free = free.offerable_to(role)
        if first and not lacking:
            return False
        offer = free if quota is None else cap(free, within_limits(quota, self.consumed[role]))
        spare = {k: lacking.get(k, 0.0) + max(0.0, self.unallocated.get(k, 0.0) - need)
                 for k, need in self.headroom.items()}
        offer = cap(offer, spare)
        if not offer.allocatable():
            return False
        self._offers[role] = offer
        return True

    def granted(self, role: str, offer: Resources) -> None:
        plain = _unreserved(offer)   # its reservations were counted as consumed already
        quota = self.a._quotas.get(role)
        if quota is not None:
            lacking = unmet(quota, self.consumed[role])
            for k in self.headroom:
                self.headroom[k] = max(0.0, self.headroom[k] - min(plain.scalar(k), lacking.get(k, 0.0)))
            add_amounts(self.consumed[role], plain.amounts)
        add_amounts(self.unallocated, plain.amounts, -1.0)


def _unreserved(res: Resources) -> Resources:
    return res.unreserved() if res.has_reservations() else res


def _intersect(a: Resources, b: Resources) -> Resources:
    return a - (a - b)


ALLOCATORS: dict[str, Callable[..., Allocator]] = {
    "drf": lambda **kw: HierarchicalAllocator("drf", **kw),
    "fifo": lambda **kw: HierarchicalAllocator("fifo", **kw),
}


def make_allocator(name: str, **kwargs) -> Allocator:
    """The allocation module registered under `name`; ValueError names the known ones."""
    try:
        return ALLOCATORS[name](**kwargs)
    except KeyError:
        raise ValueError(f"unknown allocator {name!r}; known: {', '.join(sorted(ALLOCATORS))}") from None


def known_allocators() -> Iterable[str]:
    return sorted(ALLOCATORS)
