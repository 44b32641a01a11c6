"""Reservations: which role a resource is set aside for, and how that travels in Mesos's JSON and text.

A reserved resource is a different resource from the unreserved one of the
same name (Mesos's Resources keeps them apart too: `cpus:1` and
`cpus(reservations: [(DYNAMIC,ml)]):1` never add up to `cpus:2`). So
`Resources` (resources.py) keeps a reserved amount under a *qualified
name*: the resource's name, SEP, and its reservation encoded. Its algebra
(add, subtract, contains, filters, the allocator's accounting) then keeps
reservations apart without knowing about them, and code that asks "how many
CPUs" folds the qualified names back (`base_name`).

One level of reservation is modelled (a role's own reservation, static or
dynamic); refinements (a stack of reservations for nested roles) are
refused with a clear message, as nested roles are for quota.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SEP = "\x1f"   # between a resource's name and its encoded reservation; refused in a name given to us

Labels = tuple[tuple[str, str | None], ...]


class ReservationError(ValueError):
    """A resource's reservation could not be understood; the message says which part and why."""


@dataclass(frozen=True)
class Reservation:
    """A resource set aside for `role`: STATIC (the agent's flags) or DYNAMIC (RESERVE, by `principal`)."""

    role: str
    type: str = "DYNAMIC"
    principal: str | None = None
    labels: Labels = ()

    def to_json(self) -> dict[str, Any]:
        """Mesos's `Resource.ReservationInfo`."""
        out: dict[str, Any] = {"type": self.type, "role": self.role}
        if self.principal is not None:
            out["principal"] = self.principal
        if self.labels:
            out["labels"] = _labels_json(self.labels)
        return out

    def text(self) -> str:
        """As Mesos prints it inside a resource's text: `(DYNAMIC,ml)`, `(DYNAMIC,ml,ops,{k: v})`."""
        parts = [self.type, self.role]
        if self.principal is not None:
            parts.append(self.principal)
        if self.labels:
            parts.append("{" + ", ".join(k if v is None else f"{k}: {v}" for k, v in self.labels) + "}")
        return "(" + ",".join(parts) + ")"


def qualify(name: str, reservation: Reservation | None) -> str:
    """The name a resource is kept under: its own when unreserved, else qualified by its reservation."""
    if reservation is None:
        return name
    return name + SEP + _encode(reservation)


@lru_cache(maxsize=4096)
def split(key: str) -> tuple[str, Reservation | None]:
    """A kept name back into (resource name, reservation or None)."""
    name, sep, encoded = key.partition(SEP)
    return (name, _decode(encoded)) if sep else (name, None)


def base_name(key: str) -> str:
    """The resource's own name (`cpus`) of a kept name."""
    return key.partition(SEP)[0]


def is_reserved(key: str) -> bool:
    return SEP in key


def reservation_from_json(resource: Mapping[str, Any]) -> Reservation | None:
    """The reservation a Mesos `Resource` carries, in either of Mesos's forms: `reservations` (a stack, from
    Mesos 1.4 on) or the older `role` (+ `reservation` when dynamic). None when unreserved."""
    stack = resource.get("reservations")
    if stack:
        if not isinstance(stack, list) or not all(isinstance(r, Mapping) for r in stack):
            raise ReservationError("'reservations' must be a list of ReservationInfo objects")
        if len(stack) > 1:
            raise ReservationError("a reservation refinement (more than one entry in 'reservations', for a "
                                   "nested role) is not supported: reserve for the role itself")
        return _from_info(stack[0])
    role = resource.get("role")
    if role in (None, "*"):
        return None
    if not isinstance(role, str) or not role:
        raise ReservationError(f"'role' must be a role name, not {role!r}")
    info = resource.get("reservation")
    if info is None:
        return Reservation(role, "STATIC")
    if not isinstance(info, Mapping):
        raise ReservationError("'reservation' must be an object")
    return Reservation(role, "DYNAMIC", _principal(info), _labels(info))


def json_fields(reservation: Reservation | None) -> dict[str, Any]:
    """The reservation fields of a resource in Mesos's JSON: both forms, as Mesos 1.12 writes them
    (`role`, `reservation` for a dynamic one, and `reservations`)."""
    if reservation is None:
        return {"role": "*"}
    out: dict[str, Any] = {"role": reservation.role}
    if reservation.type == "DYNAMIC":
        legacy: dict[str, Any] = {}
        if reservation.principal is not None:
            legacy["principal"] = reservation.principal
        if reservation.labels:
            legacy["labels"] = _labels_json(reservation.labels)
        out["reservation"] = legacy
    out["reservations"] = [reservation.to_json()]
    return out


# ---- helpers ----------------------------------------------------------------

def _from_info(info: Mapping[str, Any]) -> Reservation:
    kind = info.get("type", "DYNAMIC" if info.get("principal") or info.get("labels") else "STATIC")
    if kind not in ("STATIC", "DYNAMIC"):
        raise ReservationError(f"reservation type must be STATIC or DYNAMIC, not {kind!r}")
    role = info.get("role")
    if not isinstance(role, str) or not role or role == "*":
        raise ReservationError(f"a reservation needs the role it reserves for (not {role!r})")
    return Reservation(role, kind, _principal(info), _labels(info))


def _principal(info: Mapping[str, Any]) -> str | None:
    principal = info.get("principal")
    if principal is not None and not isinstance(principal, str):
        raise ReservationError(f"a reservation's principal must be a string, not {principal!r}")
    return principal


def _labels(info: Mapping[str, Any]) -> Labels:
    labels = info.get("labels")
    if labels is None:
        return ()
    items = labels.get("labels") if isinstance(labels, Mapping) else None
    if not isinstance(items, list) or not all(isinstance(x, Mapping) and isinstance(x.get("key"), str)
                                              for x in items):
        raise ReservationError("a reservation's labels must be {\"labels\": [{\"key\": ..., \"value\": ...}]}")
    return tuple((x["key"], None if x.get("value") is None else str(x["value"])) for x in items)


def _labels_json(labels: Labels) -> dict[str, Any]:
    return {"labels": [{"key": k} if v is None else {"key": k, "value": v} for k, v in labels]}


def _encode(r: Reservation) -> str:
    return json.dumps([r.role, r.type, r.principal, [list(x) for x in r.labels]], separators=(",", ":"))


def _decode(encoded: str) -> Reservation:
    role, kind, principal, labels = json.loads(encoded)
    return Reservation(role, kind, principal, tuple((k, v) for k, v in labels))
