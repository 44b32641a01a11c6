"""RESERVE, UNRESERVE, CREATE, DESTROY, GROW_VOLUME and SHRINK_VOLUME as values: what an operation takes from
an agent and what it puts back.

Pure (no master state): the scheduler's ACCEPT and the operator API's
RESERVE/UNRESERVE_RESOURCES, CREATE/DESTROY_VOLUMES and GROW/SHRINK_VOLUME all check an
operation here and get `(before, after)`, the resources it replaces and
their replacement (the same amounts, reserved or not, a volume or not),
which the master then applies to the agent
(master_core.Master.convert_resources). Texts follow Mesos 1.12's where it
has one ("Resource cpus:0.5 is not dynamically reserved"). What needs the
agent's state (a volume id already there, a volume in use) the master
checks (`volume_conflict`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from scylla_singa.mesos.api.reservations import Reservation, is_shared, strip_volume
from scylla_singa.mesos.api.resources import ResourceError, Resources


class OperationInvalid(ValueError):
    """A RESERVE or UNRESERVE that cannot be applied; the message says which resource and why."""


def reserve(items: Any, principal: str | None, roles: Iterable[str] | None = None) -> tuple[Resources, Resources]:
    """(the resources taken, the reserved ones put back) of a RESERVE of `items`: unreserved resources, or
    ones reserved for an ancestor role that the RESERVE refines for a nested role.

    Every item must be dynamically reserved; when `principal` (who asks) is known, a reservation that names a
    principal must name that one; when `roles` is given (a framework's roles: the call is an ACCEPT), each
    item must be allocated to one of them and reserved for the role it is allocated to, as Mesos checks it.
    """
    after = _each_dynamic(items, "RESERVE")
    for item, (piece, reservation) in zip(items, _pieces(items)):
        if principal is not None and reservation.principal not in (None, principal):
            raise OperationInvalid(f"Resource {piece} is reserved by principal '{reservation.principal}', but "
                                   f"the request comes from principal '{principal}'")
        if roles is not None:
            _check_allocated_to_its_role(item, piece, reservation.role, set(roles))
    return after.popped_form(), after


def _check_allocated_to_its_role(item: dict[str, Any], piece: Resources, role: str, roles: set[str]) -> None:
    """A framework reserves what it was offered (allocated to one of its roles) for that same role; Mesos's
    checks, in its order and words."""
    allocated = (item.get("allocation_info") or {}).get("role")
    framework_roles = "{ " + ", ".join(sorted(roles)) + " }"
    if not allocated:
        raise OperationInvalid(f"A reserve operation was attempted on unallocated resource {piece}, but "
                               f"frameworks can only perform reservations on allocated resources")
    if allocated != role:
        raise OperationInvalid(f"A reserve operation was attempted for a resource with role '{role}', but the "
                               f"resource was allocated to role '{allocated}'")
    if allocated not in roles:
        raise OperationInvalid(f"A reserve operation was attempted for a resource allocated to role "
                               f"'{allocated}', but the framework only has roles '{framework_roles}'")
    if role not in roles:
        raise OperationInvalid(f"A reserve operation was attempted for a resource with role '{role}', but the "
                               f"framework can only reserve resources with roles '{framework_roles}'")


def unreserve(items: Any) -> tuple[Resources, Resources]:
    """(the reserved resources taken, the ones put back) of an UNRESERVE of `items`: unreserved, or reserved as
    the reservation the latest one refined."""
    before = _each_dynamic(items, "UNRESERVE")
    return before, before.popped_form()


def create(items: Any, principal: str | None, roles: Iterable[str] | None = None) -> tuple[Resources, Resources]:
    """(the reserved disk taken, the persistent volumes put back) of a CREATE of `items`.

    Each item must be a read-write persistent volume on dynamically reserved disk (the parse refuses an
    unreserved one), with an id and a relative container path that stay inside the agent's volume directory
    and the task's sandbox; its principal, when given, must be who asks."""
    after = _parsed(items, "CREATE")
    ids: set[str] = set()
    for piece, reservation in _pieces(items):
        volumes = piece.volumes()
        if not volumes:
            raise OperationInvalid(f"Not a persistent volume: Resource {piece} does not have DiskInfo")
        volume = volumes[0][0]
        if volume.mode != "RW":
            raise OperationInvalid("Not a persistent volume: Read-only persistent volume not supported")
        if volume.id in ids:
            raise OperationInvalid(f"Persistence ID '{volume.id}' is not unique")
        ids.add(volume.id)
        for what, name in (("Persistence ID", volume.id), ("Role", reservation.role if reservation else "")):
            if not _PATH_PART.fullmatch(name) or name in (".", ".."):
                raise OperationInvalid(f"{what} '{name}' must be letters, digits, '.', '_' or '-' (it names a "
                                       "directory on the agent)")
        if ".." in volume.container_path.split("/"):
            raise OperationInvalid(f"Volume container path '{volume.container_path}' must not contain '..'")
        if principal is not None and volume.principal not in (None, principal):
            raise OperationInvalid(f"Persistent volume {volume.id} names principal '{volume.principal}', but the "
                                   f"request comes from principal '{principal}'")
        allowed = None if roles is None else set(roles)
        if allowed is not None and reservation is not None and reservation.role not in allowed:
            raise OperationInvalid(f"Resource {piece} is reserved for role '{reservation.role}', which is not "
                                   f"one of this framework's roles ({', '.join(sorted(allowed))})")
    return after.without_volumes(), after


def destroy(items: Any) -> tuple[Resources, Resources]:
    """(the persistent volumes taken, the reserved disk put back) of a DESTROY of `items`."""
    before = _parsed(items, "DESTROY")
    for piece, _ in _pieces(items):
        if not piece.volumes():
            raise OperationInvalid(f"Not a persistent volume: Resource {piece} does not have DiskInfo")
    return before, before.without_volumes()


def conversion(kind: str, operation: dict[str, Any], principal: str | None, roles: Iterable[str] | None,
               on_agent: Resources, in_use: Resources) -> tuple[Resources, Resources]:
    """(before, after) of a RESERVE, UNRESERVE, CREATE or DESTROY whose payload is `operation` (its
    `resources` or `volumes`), checked alone and against the agent (holding `on_agent`, of which its tasks
    use `in_use`); OperationInvalid says why not. `principal`: who asks; `roles`: a framework's roles."""
    if kind == "RESERVE":
        return reserve(operation.get("resources"), principal, roles)
    if kind == "UNRESERVE":
        return unreserve(operation.get("resources"))
    if kind == "GROW_VOLUME":
        return grow(operation)
    if kind == "SHRINK_VOLUME":
        return shrink(operation)
    before, after = (create(operation.get("volumes"), principal, roles) if kind == "CREATE"
                     else destroy(operation.get("volumes")))
    conflict = volume_conflict(kind, after if kind == "CREATE" else before, on_agent, in_use)
    if conflict:
        raise OperationInvalid(conflict)
    return before, after


def grow(operation: dict[str, Any]) -> tuple[Resources, Resources]:
    """(the volume and the disk added, the bigger volume) of a GROW_VOLUME: `volume` and `addition`, disk of
    the volume's own reservation."""
    volume, key, size = _one_volume(operation.get("volume"), "GrowVolume.volume")
    if is_shared(key):
        raise OperationInvalid("Growing a shared persistent volume is not supported")
    raw = operation.get("addition")
    amount = _amount(raw)
    if amount <= 0:
        raise OperationInvalid("The size of 'GrowVolume.addition' field must be greater than zero")
    addition = _parsed([raw])
    if set(addition.scalars) != {strip_volume(key)} or addition.ranges or addition.sets:
        raise OperationInvalid("Incompatible resources in the 'GrowVolume.volume' and 'GrowVolume.addition' "
                               "fields")
    return volume + addition, Resources({key: size + amount})


def shrink(operation: dict[str, Any]) -> tuple[Resources, Resources]:
    """(the volume, the smaller volume and the disk taken off it) of a SHRINK_VOLUME: `volume`, `subtract`."""
    volume, key, size = _one_volume(operation.get("volume"), "ShrinkVolume.volume")
    if is_shared(key):
        raise OperationInvalid("Shrinking a shared persistent volume is not supported")
    subtract = operation.get("subtract")
    amount = _amount({"scalar": subtract} if isinstance(subtract, dict) else None)
    if amount <= 0:
        raise OperationInvalid("Value of 'ShrinkVolume.subtract' must be greater than zero")
    if amount >= size:
        raise OperationInvalid("Value of 'ShrinkVolume.subtract' must be smaller than the size of "
                               "'ShrinkVolume.volume'")
    return volume, Resources({key: size - amount, strip_volume(key): amount})


def _one_volume(raw: Any, field: str) -> tuple[Resources, str, float]:
    """The persistent volume a GROW/SHRINK names: (it, its kept name, its size)."""
    volume = _parsed([raw])
    if len(volume.scalars) != 1 or not volume.volumes():
        raise OperationInvalid(f"Invalid persistent volume in the '{field}' field: Resource {volume} does not "
                               "have DiskInfo")
    ((key, size),) = volume.scalars.items()
    return volume, key, size


def _amount(raw: Any) -> float:
    """A scalar resource's value as given (a zero or negative one is not kept by Resources)."""
    try:
        return float(raw["scalar"]["value"])
    except (KeyError, TypeError, ValueError):
        return 0.0


def volume_conflict(kind: str, volumes: Resources, on_agent: Resources, in_use: Resources) -> str | None:
    """Why a CREATE or DESTROY of `volumes` cannot apply to an agent holding `on_agent` (of which tasks use
    `in_use`), or None: Mesos's texts."""
    if kind == "CREATE":
        there = {v.id for v, _, _ in on_agent.volumes()}
        taken = [v.id for v, _, _ in volumes.volumes() if v.id in there]
        return f"Persistence ID '{taken[0]}' is not unique" if taken else None
    if not on_agent.contains(volumes):
        return "Persistent volumes not found"
    used = {v.id for v, _, _ in in_use.volumes()}
    busy = [v.id for v, _, _ in volumes.volumes() if v.id in used]
    return f"Persistent volumes in use: {', '.join(busy)}" if busy else None


_PATH_PART = re.compile(r"[A-Za-z0-9._-]+")


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


def _parsed(items: Any, kind: str | None = None) -> Resources:
    if kind is not None and (not isinstance(items, list) or not items):
        raise OperationInvalid(f"a {kind} operation needs the volumes it applies to ('volumes': [...])")
    try:
        return Resources.from_json(items)
    except ResourceError as exc:
        raise OperationInvalid(f"Invalid resources: {exc}") from None
