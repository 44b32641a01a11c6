"""Reservations: which role a resource is set aside for, and how that travels in Mesos's JSON and text.

A reserved resource is a different resource from the unreserved one of the
same name (Mesos's Resources keeps them apart too: `cpus:1` and
`cpus(reservations: [(DYNAMIC,ml)]):1` never add up to `cpus:2`). So
`Resources` (resources.py) keeps a reserved amount under a *qualified
name*: the resource's name, SEP, and its reservation encoded. Its algebra
(add, subtract, contains, filters, the allocator's accounting) then keeps
reservations apart without knowing about them, and code that asks "how many
CPUs" folds the qualified names back (`base_name`).

A reservation may refine another (a stack, for nested roles: `eng`'s
reservation refined to `eng/ml`); the kept name holds the whole stack,
and the latest reservation decides who owns the resource: it is offered to
that role and to roles nested under it. A persistent
volume (reserved disk with `disk.persistence` and `disk.volume`) is one more
part of the qualified name: each volume is a resource of its own, shared
(`shared: {}`, usable by many tasks at once) or not.
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
    """A resource set aside for `role`: STATIC (the agent's flags) or DYNAMIC (RESERVE, by `principal`).
    A refined one (a nested role's, made of an ancestor role's reservation) keeps the reservations it
    refines in `below`, oldest first: UNRESERVE gives the resource back to the last of them."""

    role: str
    type: str = "DYNAMIC"
    principal: str | None = None
    labels: Labels = ()
    below: tuple[Reservation, ...] = ()

    @property
    def popped(self) -> Reservation | None:
        """What the resource is reserved as once this reservation goes: the one it refines, or None."""
        if not self.below:
            return None
        top = self.below[-1]
        return Reservation(top.role, top.type, top.principal, top.labels, self.below[:-1])

    @property
    def stack(self) -> tuple[Reservation, ...]:
        """Every reservation, oldest first, each without its own `below` (Mesos's `reservations`)."""
        return (*self.below, Reservation(self.role, self.type, self.principal, self.labels))

    def to_json(self) -> dict[str, Any]:
        """Mesos's `Resource.ReservationInfo`."""
        out: dict[str, Any] = {"type": self.type, "role": self.role}
        if self.principal is not None:
            out["principal"] = self.principal
        if self.labels:
            out["labels"] = _labels_json(self.labels)
        return out

    def text(self) -> str:
        """As Mesos prints it inside a resource's text: `(DYNAMIC,ml)`, `(DYNAMIC,ml,ops,{k: v})`; a refined one
        after those it refines: `(STATIC,eng),(DYNAMIC,eng/ml)`."""
        if self.below:
            return ",".join(r.text() for r in self.stack)
        parts = [self.type, self.role]
        if self.principal is not None:
            parts.append(self.principal)
        if self.labels:
            parts.append("{" + ", ".join(k if v is None else f"{k}: {v}" for k, v in self.labels) + "}")
        return "(" + ",".join(parts) + ")"


@dataclass(frozen=True)
class PersistentVolume:
    """A persistent volume made of reserved disk: its id on the agent, where a task sees it, and who made it."""

    id: str
    container_path: str
    mode: str = "RW"
    principal: str | None = None
    shared: bool = False   # Resource.shared: tasks of any framework of its role may use it at once

    def to_json(self) -> dict[str, Any]:
        """Mesos's `Resource.DiskInfo` of the volume."""
        persistence: dict[str, Any] = {"id": self.id}
        if self.principal is not None:
            persistence["principal"] = self.principal
        return {"persistence": persistence, "volume": {"mode": self.mode, "container_path": self.container_path}}


def qualify(name: str, reservation: Reservation | None, volume: PersistentVolume | None = None) -> str:
    """The name a resource is kept under: its own when unreserved, else qualified by its reservation (and
    its volume)."""
    if reservation is None:
        return name
    key = name + SEP + _encode(reservation)
    return key if volume is None else key + SEP + _encode_volume(volume)


@lru_cache(maxsize=4096)
def split(key: str) -> tuple[str, Reservation | None, PersistentVolume | None]:
    """A kept name back into (resource name, reservation or None, persistent volume or None)."""
    parts = key.split(SEP)
    if len(parts) == 1:
        return key, None, None
    return parts[0], _decode(parts[1]), (_decode_volume(parts[2]) if len(parts) > 2 else None)


def strip_volume(key: str) -> str:
    """The kept name of the disk a volume was made of (the same reservation, no volume)."""
    return SEP.join(key.split(SEP)[:2])


def volume_from_json(name: str, resource: Mapping[str, Any]) -> PersistentVolume | None:
    """The persistent volume a Mesos `Resource`'s DiskInfo describes, None without one. Mesos's texts for a
    DiskInfo it refuses; disk sources (MOUNT, PATH, BLOCK) are not served here."""
    disk = resource.get("disk")
    shared = resource.get("shared")
    if shared is not None and not isinstance(shared, Mapping):
        raise ReservationError("'shared' must be a SharedInfo object ({})")
    if disk is None:
        if shared is not None:
            raise ReservationError("Only persistent volumes can be shared" if name == "disk"
                                   else f"Resource {name} cannot be shared")
        return None
    if not isinstance(disk, Mapping):
        raise ReservationError("'disk' must be a DiskInfo object")
    if name != "disk":
        raise ReservationError(f"DiskInfo should not be set for {name} resource")
    if disk.get("source") is not None:
        raise ReservationError("disk sources (MOUNT, PATH, BLOCK) are not supported: only persistent volumes")
    persistence, volume = disk.get("persistence"), disk.get("volume")
    if persistence is None:
        if volume is not None:
            raise ReservationError("a DiskInfo 'volume' needs 'persistence' (only persistent volumes are served)")
        if shared is not None:
            raise ReservationError("Only persistent volumes can be shared")
        return None
    if not isinstance(persistence, Mapping) or not isinstance(persistence.get("id"), str) or not persistence["id"]:
        raise ReservationError("Invalid DiskInfo: a persistent volume needs 'persistence': {\"id\": ...}")
    if volume is None:
        raise ReservationError("Invalid DiskInfo: Expecting 'volume' to be set for persistent volume")
    if not isinstance(volume, Mapping) or not isinstance(volume.get("container_path"), str):
        raise ReservationError("Invalid DiskInfo: a volume needs 'container_path'")
    mode = volume.get("mode", "RW")
    if mode not in ("RW", "RO"):
        raise ReservationError(f"Invalid DiskInfo: volume mode must be RW or RO, not {mode!r}")
    return PersistentVolume(persistence["id"], volume["container_path"], mode, _principal(persistence),
                            shared is not None)


def is_shared(key: str) -> bool:
    """Whether a kept name is a shared persistent volume's."""
    volume = split(key)[2] if key.count(SEP) >= 2 else None
    return volume is not None and volume.shared


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
        entries = [_from_info(info) for info in stack]
        for ancestor, refined in zip(entries, entries[1:]):   # Mesos's checks and texts
            if refined.type == "STATIC":
                raise ReservationError("Invalid refined reservation: A refined reservation cannot be STATIC")
            if not is_strict_subrole(refined.role, ancestor.role):
                raise ReservationError(f"Invalid refined reservation: role '{refined.role}' is not a refinement "
                                       f"of '{ancestor.role}'")
        top = entries[-1]
        return Reservation(top.role, top.type, top.principal, top.labels, tuple(entries[:-1]))
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
    if reservation.below:   # the older form cannot say a refinement: Mesos writes only `reservations`
        return {"reservations": [r.to_json() for r in reservation.stack]}
    out: dict[str, Any] = {"role": reservation.role}
    if reservation.type == "DYNAMIC":
        legacy: dict[str, Any] = {}
        if reservation.principal is not None:
            legacy["principal"] = reservation.principal
        if reservation.labels:
            legacy["labels"] = _labels_json(reservation.labels)
        out["reservation"] = legacy
    out["reservations"] = [r.to_json() for r in reservation.stack]
    return out


def is_strict_subrole(role: str, ancestor: str) -> bool:
    """Whether `role` is nested under `ancestor` (`eng/ml` under `eng`), not `ancestor` itself."""
    return role.startswith(ancestor + "/")


def pop_reservation(key: str) -> str:
    """The kept name of a reserved resource once its latest reservation goes (UNRESERVE): reserved as the
    reservation it refined, or unreserved."""
    name, reservation, volume = split(key)
    return name if reservation is None else qualify(name, reservation.popped, volume)


def offered_form(resources: list[dict[str, Any]], refinement: bool) -> list[dict[str, Any]]:
    """`resources` (written in both forms) as Mesos 1.12 offers them to a framework: with the framework
    capability RESERVATION_REFINEMENT only `reservations`; without it only the older `role` (`*` when
    unreserved) and `reservation`. Both measured on a live Mesos 1.12. The dicts of `resources` may be
    in the answer themselves."""
    # A resource with nothing to drop is given back as it is, not copied (an unreserved one offered to a
    # framework without the capability: nearly every offer, issue 17).
    if refinement:
        return [{k: v for k, v in r.items() if k not in ("role", "reservation")}
                if "role" in r or "reservation" in r else r for r in resources]
    return [{k: v for k, v in r.items() if k != "reservations"} if "reservations" in r else r for r in resources]


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
    return json.dumps(_fields_of(r), separators=(",", ":"))


def _fields_of(r: Reservation) -> list[Any]:
    fields = [r.role, r.type, r.principal, [list(x) for x in r.labels]]
    return fields + [[_fields_of(b) for b in r.below]] if r.below else fields


def _decode(encoded: str) -> Reservation:
    return _from_fields(json.loads(encoded))


def _from_fields(fields: list[Any]) -> Reservation:
    role, kind, principal, labels = fields[:4]
    below = tuple(_from_fields(b) for b in fields[4]) if len(fields) > 4 else ()
    return Reservation(role, kind, principal, tuple((k, v) for k, v in labels), below)


def _encode_volume(v: PersistentVolume) -> str:
    fields = [v.id, v.container_path, v.mode, v.principal] + ([True] if v.shared else [])
    return json.dumps(fields, separators=(",", ":"))


def _decode_volume(encoded: str) -> PersistentVolume:
    return PersistentVolume(*json.loads(encoded))
