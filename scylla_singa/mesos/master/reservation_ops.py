"""RESERVE and UNRESERVE as values: what an operation takes from an agent and what it puts back.

Pure (no master state): the scheduler's ACCEPT and the operator API's
RESERVE_RESOURCES / UNRESERVE_RESOURCES both check an operation here and get
`(before, after)`, the resources it replaces and their replacement (the same
amounts, reserved or not), which the master then applies to the agent
(master_core.Master.convert_resources). Texts follow Mesos 1.12's where it
has one ("Resource cpus:0.5 is not dynamically reserved").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scylla_singa.mesos.api.reservations import Reservation
from scylla_singa.mesos.api.resources import ResourceError, Resources


class OperationInvalid(ValueError):
    """A RESERVE or UNRESERVE that cannot be applied; the message says which resource and why."""


def reserve(items: Any, principal: str | None, roles: Iterable[str] | None = None) -> tuple[Resources, Resources]:
    """(the unreserved resources taken, the reserved ones put back) of a RESERVE of `items`.

    Every item must be dynamically reserved; when `principal` (who asks) is known, a reservation that names a
    principal must name that one; when `roles` is given (a framework's roles), it must reserve for one of them.
    """
    after = _each_dynamic(items, "RESERVE")
    for piece, reservation in _pieces(items):
        if principal is not None and reservation.principal not in (None, principal):
            raise OperationInvalid(f"Resource {piece} is reserved by principal '{reservation.principal}', but "
                                   f"the request comes from principal '{principal}'")
        allowed = None if roles is None else set(roles)
        if allowed is not None and reservation.role not in allowed:
            raise OperationInvalid(f"Resource {piece} is reserved for role '{reservation.role}', which is not "
                                   f"one of this framework's roles ({', '.join(sorted(allowed))})")
    return after.unreserved_form(), after


def unreserve(items: Any) -> tuple[Resources, Resources]:
    """(the reserved resources taken, the unreserved ones put back) of an UNRESERVE of `items`."""
    before = _each_dynamic(items, "UNRESERVE")
    return before, before.unreserved_form()


def _each_dynamic(items: Any, kind: str) -> Resources:
    if not isinstance(items, list) or not items:
        raise OperationInvalid(f"a {kind} operation needs the resources it applies to ('resources': [...])")
    for piece, reservation in _pieces(items):
        if reservation is None or reservation.type != "DYNAMIC":
            raise OperationInvalid(f"Resource {piece} is not dynamically reserved")
    return _parsed(items)


def _pieces(items: list[Any]) -> list[tuple[Resources, Reservation | None]]:
    """Each item alone, with its reservation (for per-resource messages)."""
    out = []
    for item in items:
        piece = _parsed([item])
        reservations = piece.reservations()
        out.append((piece, next(iter(reservations)) if len(reservations) == 1 else None))
    return out


def _parsed(items: list[Any]) -> Resources:
    try:
        return Resources.from_json(items)
    except ResourceError as exc:
        raise OperationInvalid(f"Invalid resources: {exc}") from None
