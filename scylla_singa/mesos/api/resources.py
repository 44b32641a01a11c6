"""Mesos resources (scalars, ranges, sets) and agent attributes.

`Resources` is an immutable value: `+`, `-`, `contains`, JSON in and out in
Mesos's shape, and Mesos's text form (`cpus:4;mem:8192;ports:[31000-32000];
gpus_ids:{a,b}`). A reserved resource is kept under a qualified name
(reservations.py), so the algebra keeps it apart from the unreserved one;
`amounts`, `scalar`, `to_dict` and `quantities` fold the names back.
Scalars keep three decimals, as Mesos's fixed-point arithmetic does.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from scylla_singa.common.resource_text import ResourceTextError, resource_items
from .reservations import (SEP, PersistentVolume, Reservation, ReservationError, base_name, is_reserved, is_shared,
                           is_strict_subrole, json_fields, pop_reservation, qualify, reservation_from_json, split,
                           strip_volume, volume_from_json)

Range = tuple[int, int]

MIN_CPUS = 0.01   # Mesos's smallest allocatable CPU share
MIN_MEM = 32.0    # ... and memory (MB)


class ResourceError(ValueError):
    """A resource or attribute text/JSON could not be understood; the message says which part."""


def _round(x: float) -> float:
    return round(x, 3)


def _merge(ranges: Iterable[Range]) -> tuple[Range, ...]:
    out: list[list[int]] = []
    for b, e in sorted(ranges):
        if out and b <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return tuple((b, e) for b, e in out)


def _subtract_ranges(have: tuple[Range, ...], take: tuple[Range, ...]) -> tuple[Range, ...]:
    out = list(have)
    for tb, te in take:
        nxt: list[Range] = []
        for b, e in out:
            if te < b or tb > e:
                nxt.append((b, e))
                continue
            if b < tb:
                nxt.append((b, tb - 1))
            if te < e:
                nxt.append((te + 1, e))
        out = nxt
    return tuple(out)


def _ranges_contain(have: tuple[Range, ...], want: tuple[Range, ...]) -> bool:
    return all(any(b <= wb and we <= e for b, e in have) for wb, we in want)


def _merge_two(have: tuple[Range, ...], more: tuple[Range, ...]) -> tuple[Range, ...]:
    return _merge((*have, *more))


def _joined(mine: dict[str, Any], theirs: dict[str, Any], join: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """Both sides' non-empty parts by name, `join` where both hold one (the union of non-empty parts is
    non-empty); one side's dict itself when the other has none."""
    if not theirs:
        return mine
    if not mine:
        return theirs
    out = dict(mine)
    for k, v in theirs.items():
        out[k] = join(out[k], v) if k in out else v
    return out


def _left(mine: dict[str, Any], theirs: dict[str, Any], remove: Callable[[Any, Any], Any]) -> dict[str, Any]:
    """What is left of each of `mine`'s parts after `remove`-ing `theirs`' part of that name; empty ones go."""
    if not mine or not theirs:
        return mine
    out = {}
    for k, v in mine.items():
        if k in theirs:
            v = remove(v, theirs[k])
            if not v:
                continue
        out[k] = v
    return out


class Resources:
    """An immutable bag of named scalar, range and set resources."""

    __slots__ = ("scalars", "ranges", "sets")

    def __init__(self, scalars: Mapping[str, float] | None = None,
                 ranges: Mapping[str, Iterable[Range]] | None = None,
                 sets: Mapping[str, Iterable[str]] | None = None) -> None:
        if scalars is None and ranges is None and sets is None:
            self.scalars, self.ranges, self.sets = {}, {}, {}   # Resources(): made for every `get` default
            return
        self.scalars: dict[str, float] = {k: _round(v) for k, v in (scalars or {}).items() if _round(v) > 0}
        self.ranges: dict[str, tuple[Range, ...]] = {}
        for k, v in (ranges or {}).items():
            merged = _merge(v)
            if merged:
                self.ranges[k] = merged
        self.sets: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in (sets or {}).items() if v}

    # ---- construction -------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> Resources:
        """Mesos's text form, `;`-separated: `cpus:4;mem:8192;ports:[31000-32000];ids:{a,b}`; `cpus(ml):2` is
        statically reserved for role ml, as in an agent's `--resources`."""
        scalars: dict[str, float] = {}
        ranges: dict[str, list[Range]] = {}
        sets: dict[str, set[str]] = {}
        try:
            items = resource_items(text)
        except ResourceTextError as exc:
            raise ResourceError(str(exc)) from None
        for plain, val, part, role in items:
            name = plain if role is None else qualify(plain, _static(role, part))
            if val.startswith("["):
                ranges.setdefault(name, []).extend(_parse_ranges(name, val))
            elif val.startswith("{"):
                sets.setdefault(name, set()).update(x.strip() for x in val.strip("{}").split(",") if x.strip())
            else:
                try:
                    scalars[name] = scalars.get(name, 0.0) + float(val)
                except ValueError:
                    raise ResourceError(f"bad resource {part!r}: {val!r} is not a number, [ranges] or "
                                        "{set}") from None
        return cls(scalars, ranges, sets)

    @classmethod
    def from_json(cls, items: Iterable[Mapping[str, Any]] | None) -> Resources:
        """From a Mesos `Resource` list; raises ResourceError on malformed or invalid entries.

        Invalid is as Mesos's Resources::validate says (its texts, after "Resource 'NAME' is
        invalid: "): a scalar that is negative, NaN or infinite (Mesos's fixed-point arithmetic
        has no such value; ours would carry it into offers and /master/state), ranges reversed or
        overlapping, a set with an item twice.
        """
        scalars: dict[str, float] = {}
        ranges: dict[str, list[Range]] = {}
        sets: dict[str, set[str]] = {}
        for r in items or ():
            if not isinstance(r, Mapping) or not isinstance(r.get("name"), str):
                raise ResourceError(f"bad resource {r!r}: needs a name")
            name, kind = r["name"], r.get("type", "SCALAR")
            if SEP in name:
                raise ResourceError(f"resource name {name!r} holds a control character (\\x1f)")
            try:
                if "reservations" in r or r.get("role", "*") != "*" or "disk" in r or "shared" in r:
                    name = _qualified(name, r)
                if kind == "SCALAR":
                    amount = float(r["scalar"]["value"])
                    _check_scalar(name, amount)
                    scalars[name] = scalars.get(name, 0.0) + amount
                elif kind == "RANGES":
                    given = [(int(x["begin"]), int(x["end"])) for x in r["ranges"].get("range", [])]
                    _check_ranges(name, given)
                    ranges.setdefault(name, []).extend(given)
                elif kind == "SET":
                    listed = [str(x) for x in r["set"].get("item", [])]
                    if len(set(listed)) != len(listed):
                        raise ResourceError(f"Resource '{name}' is invalid: Invalid set resource: duplicated "
                                            "elements")
                    sets.setdefault(name, set()).update(listed)
                else:
                    raise ResourceError(f"resource {name!r} has unknown type {kind!r}")
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                if isinstance(exc, ResourceError):
                    raise
                raise ResourceError(f"resource {name!r} of type {kind} is malformed: {r!r}") from None
        return cls(scalars, ranges, sets)

    def to_json(self, allocation_role: str | None = None) -> list[dict[str, Any]]:
        """A Mesos `Resource` list (unreserved first, scalars first, in a stable order), reservations in both
        of Mesos's forms. `allocation_role` adds the `allocation_info` Mesos puts on resources offered to,
        or used by, a framework."""
        # (an unreserved resource's fields inline: every offer writes four or more; issue 17)
        out: list[dict[str, Any]] = []
        reserved = False
        for k in sorted(self.scalars, key=_order) if len(self.scalars) > 1 else self.scalars:
            if SEP in k:
                reserved = True
                out.append({"name": base_name(k), "type": "SCALAR", "scalar": {"value": self.scalars[k]},
                            **_fields(k)})
            else:
                out.append({"name": k, "type": "SCALAR", "scalar": {"value": self.scalars[k]}, "role": "*"})
        for k in sorted(self.ranges, key=_order) if len(self.ranges) > 1 else self.ranges:
            rng = [{"begin": b, "end": e} for b, e in self.ranges[k]]
            reserved = reserved or SEP in k
            out.append({"name": base_name(k), "type": "RANGES", "ranges": {"range": rng}, **_fields(k)})
        for k in sorted(self.sets, key=_order) if len(self.sets) > 1 else self.sets:
            reserved = reserved or SEP in k
            out.append({"name": base_name(k), "type": "SET", "set": {"item": sorted(self.sets[k])}, **_fields(k)})
        if reserved:
            out.sort(key=lambda item: "reservations" in item)
        if allocation_role is not None:
            for item in out:
                item["allocation_info"] = {"role": allocation_role}
        return out

    def to_dict(self) -> dict[str, Any]:
        """The flat shape of Mesos's /master/state: {"cpus": 4.0, "ports": "[31000-32000]", ...} (reserved
        and unreserved together)."""
        if self.has_reservations():
            return self.unreserved_form().to_dict()
        out: dict[str, Any] = {k: self.scalars.get(k, 0.0) for k in ("cpus", "mem", "disk", "gpus")}
        out.update(self.scalars)
        for k, v in self.ranges.items():
            out[k] = "[" + ", ".join(f"{b}-{e}" for b, e in v) + "]"
        for k, v in self.sets.items():
            out[k] = "{" + ",".join(sorted(v)) + "}"
        return out

    def quantities(self) -> dict[str, float]:
        """How much of each resource, as /master/roles writes it: scalars, and ranges and sets by their size."""
        if self.has_reservations():
            return self.unreserved_form().quantities()
        out: dict[str, float] = dict(self.scalars)
        for k, v in self.ranges.items():
            out[k] = float(sum(e - b + 1 for b, e in v))
        for k, v in self.sets.items():
            out[k] = float(len(v))
        return dict(sorted(out.items()))

    # ---- algebra ------------------------------------------------------
    @classmethod
    def _of_scalars(cls, scalars: dict[str, float]) -> Resources:
        """Scalars already rounded and positive, taken as they are (no ranges, no sets)."""
        out = object.__new__(cls)
        out.scalars, out.ranges, out.sets = scalars, {}, {}
        return out

    def __add__(self, other: Resources) -> Resources:
        # Built without the constructor's passes (the allocator adds and subtracts for every task; issue
        # 17): each side's scalars are rounded and positive, its ranges merged, so only what both sides
        # hold needs work, and what one side alone holds is shared (a Resources is never changed).
        scalars = dict(self.scalars)
        for k, v in other.scalars.items():
            scalars[k] = _round(scalars[k] + v) if k in scalars else v
        out = Resources._of_scalars(scalars)
        out.ranges = _joined(self.ranges, other.ranges, _merge_two)
        out.sets = _joined(self.sets, other.sets, frozenset.union)
        return out

    def __sub__(self, other: Resources) -> Resources:
        """Remove `other`; what `self` does not hold is ignored (never negative)."""
        theirs = other.scalars
        kept = {}
        for k, v in self.scalars.items():
            if k in theirs:
                v = _round(v - theirs[k])
                if v <= 0:
                    continue
            kept[k] = v
        out = Resources._of_scalars(kept)
        # what is left of merged ranges is merged (the pieces of one range keep their order and gaps)
        out.ranges = _left(self.ranges, other.ranges, _subtract_ranges)
        out.sets = _left(self.sets, other.sets, frozenset.difference)
        return out

    def contains(self, other: Resources) -> bool:
        """True when every part of `other` is in `self`."""
        # plain loops, no generators: the allocator asks this for every offer's remainder and every task's end
        mine = self.scalars
        for k, v in other.scalars.items():
            if mine.get(k, 0.0) + 1e-9 < v:
                return False
        for k, want in other.ranges.items():
            if not _ranges_contain(self.ranges.get(k, ()), want):
                return False
        for k, items in other.sets.items():
            if not items <= self.sets.get(k, frozenset()):
                return False
        return True

    def is_empty(self) -> bool:
        return not (self.scalars or self.ranges or self.sets)

    def allocatable(self) -> bool:
        """Mesos's minimum allocatable: at least 0.01 CPU or 32 MB of memory (reserved or not)."""
        if self.scalars.get("cpus", 0.0) >= MIN_CPUS or self.scalars.get("mem", 0.0) >= MIN_MEM:
            return True
        return self.has_reservations() and (self.scalar("cpus") >= MIN_CPUS or self.scalar("mem") >= MIN_MEM)

    def scalar(self, name: str) -> float:
        """How much of scalar `name` there is, reserved or not."""
        amount = self.scalars.get(name, 0.0)
        if self.has_reservations():
            amount += sum(v for k, v in self.scalars.items() if k != name and base_name(k) == name)
        return _round(amount)

    # ---- reservations ---------------------------------------------------
    def has_reservations(self) -> bool:
        # plain loops: this runs for every agent of every allocation round
        for keys in (self.scalars, self.ranges, self.sets):
            for k in keys:
                if SEP in k:
                    return True
        return False

    @property
    def amounts(self) -> dict[str, float]:
        """The scalars by resource name, reserved or not (what sorters and quotas count)."""
        for k in self.scalars:
            if SEP in k:
                break
        else:
            return self.scalars
        out: dict[str, float] = {}
        for k, v in self.scalars.items():
            name = base_name(k)
            out[name] = out.get(name, 0.0) + v
        return out

    def unreserved_form(self) -> Resources:
        """The same resources with every reservation dropped (what they are once unreserved)."""
        return self._select(lambda key: True, rename=base_name)

    def static_form(self) -> Resources:
        """What the agent was started with: static reservations kept, dynamic ones and volumes dropped (an
        agent's AgentInfo.resources)."""
        def static(key: str) -> str:
            name, reservation, _ = split(key)
            if reservation is None:
                return name
            bottom = reservation.stack[0]   # a refinement of a static reservation keeps that one
            return qualify(name, bottom) if bottom.type == "STATIC" else name
        return self._select(lambda key: True, rename=static)

    def made_by_operations(self) -> Resources:
        """Only what RESERVE and CREATE made (dynamic reservations, persistent volumes): what an agent keeps
        for the masters, its checkpointed resources (static reservations come from its own flags)."""
        def made(key: str) -> bool:
            _, reservation, volume = split(key)
            return reservation is not None and (reservation.type == "DYNAMIC" or volume is not None)
        return self._select(made)

    def without_volumes(self) -> Resources:
        """The same resources with every persistent volume turned back into the reserved disk it was."""
        return self._select(lambda key: True, rename=strip_volume)

    def volumes(self) -> list[tuple[PersistentVolume, Reservation, float]]:
        """The persistent volumes among these resources: (volume, its disk's reservation, size in MB)."""
        out = []
        for key, size in self.scalars.items():
            _, reservation, volume = split(key)
            if volume is not None and reservation is not None:
                out.append((volume, reservation, size))
        return out

    def shared(self) -> Resources:
        """Only the shared persistent volumes: what any number of tasks may use at once."""
        if not self.has_reservations():   # the common case, on the master's path of every task: no walk
            return _NOTHING
        return self._select(is_shared)

    def without_shared(self) -> Resources:
        """Everything but the shared persistent volumes (what a task takes for itself alone)."""
        if not self.has_reservations():
            return self
        return self._select(lambda key: not is_shared(key))

    def unreserved(self) -> Resources:
        """Only the unreserved resources."""
        return self._select(lambda key: not is_reserved(key))

    def reserved(self, role: str | None = None) -> Resources:
        """Only the reserved resources (for `role`, when given)."""
        return self._select(lambda key: is_reserved(key) and (role is None or split(key)[1].role == role))

    def offerable_to(self, role: str) -> Resources:
        """What a framework of `role` may be offered of these: the unreserved, its role's reservations and its
        ancestor roles' (`eng`'s are offered to `eng/ml`, which may refine them), as Mesos offers them."""
        if not self.has_reservations():
            return self

        def offerable(key: str) -> bool:
            if not is_reserved(key):
                return True
            owner = split(key)[1].role
            return owner == role or is_strict_subrole(role, owner)
        return self._select(offerable)

    def refined(self) -> Resources:
        """Only what is reserved by a refinement (a nested role's reservation of an ancestor's)."""
        if not self.has_reservations():
            return _NOTHING
        return self._select(lambda key: is_reserved(key) and bool(split(key)[1].below))

    def popped_form(self) -> Resources:
        """The same resources with each one's latest reservation gone (what UNRESERVE gives back: the
        reservation it refined, or unreserved)."""
        return self._select(lambda key: True, rename=pop_reservation)

    def reserved_under(self, role: str) -> Resources:
        """What is reserved for `role` or a role nested under it (Mesos counts a refinement for its parents)."""
        return self._select(lambda key: is_reserved(key) and (split(key)[1].role == role
                                                              or is_strict_subrole(split(key)[1].role, role)))

    def reserved_roles(self) -> set[str]:
        keys = (*self.scalars, *self.ranges, *self.sets)
        return {split(k)[1].role for k in keys if is_reserved(k)}

    def by_role(self) -> dict[str, Resources]:
        """The reserved resources, role by role (the `reserved_resources` of Mesos's /state)."""
        return {role: self.reserved(role) for role in sorted(self.reserved_roles())}

    def with_reservation(self, reservation: Reservation | None) -> Resources:
        """The same resources, all reserved by `reservation` (None: all unreserved)."""
        plain = self.unreserved_form()
        return Resources({qualify(k, reservation): v for k, v in plain.scalars.items()},
                         {qualify(k, reservation): v for k, v in plain.ranges.items()},
                         {qualify(k, reservation): v for k, v in plain.sets.items()})

    def reservations(self) -> set[Reservation | None]:
        """Every reservation among these resources (None for the unreserved ones)."""
        return {split(k)[1] for k in (*self.scalars, *self.ranges, *self.sets)}

    def _select(self, keep: Callable[[str], bool], rename: Callable[[str], str] = lambda key: key) -> Resources:
        name = rename
        scalars: dict[str, float] = {}
        for k, v in self.scalars.items():
            if keep(k):
                scalars[name(k)] = scalars.get(name(k), 0.0) + v
        ranges: dict[str, list[Range]] = {}
        for k, rv in self.ranges.items():
            if keep(k):
                ranges.setdefault(name(k), []).extend(rv)
        sets: dict[str, set[str]] = {}
        for k, sv in self.sets.items():
            if keep(k):
                sets.setdefault(name(k), set()).update(sv)
        return Resources(scalars, ranges, sets)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Resources) and self.scalars == other.scalars
                and self.ranges == other.ranges and self.sets == other.sets)

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.scalars.items())), tuple(sorted(self.ranges.items()))))

    def __bool__(self) -> bool:
        return not self.is_empty()

    def __str__(self) -> str:
        """Mesos's text of resources: `cpus:1; mem:768; cpus(reservations: [(DYNAMIC,ml)]):1`."""
        parts = [(k, _fmt(self.scalars[k])) for k in sorted(self.scalars, key=_order)]
        parts += [(k, "[" + ", ".join(f"{b}-{e}" for b, e in self.ranges[k]) + "]")
                  for k in sorted(self.ranges, key=_order)]
        parts += [(k, "{" + ",".join(sorted(self.sets[k])) + "}") for k in sorted(self.sets, key=_order)]
        parts.sort(key=lambda part: is_reserved(part[0]))
        return "; ".join(f"{_text_name(k)}:{v}" for k, v in parts) or "{}"

    __repr__ = __str__


_NOTHING = Resources()


def with_checkpointed(reported: Resources, checkpointed: Resources) -> Resources:
    """An agent's total from what it reports (its unreserved resources) and the reservations it kept
    (checkpointed on the master's word): the reserved amounts replace unreserved ones. Reservations that no
    longer fit (the agent shrank) are dropped, so the total never exceeds the machine."""
    base = checkpointed.static_form()   # what the operations were applied to
    if checkpointed.is_empty() or not reported.contains(base):
        return reported
    return reported - base + checkpointed


def _check_scalar(name: str, amount: float) -> None:
    if not math.isfinite(amount):
        raise ResourceError(f"Resource '{name}' is invalid: Invalid scalar resource: value {amount} is not "
                            "finite")
    if amount < 0:
        raise ResourceError(f"Resource '{name}:{amount:g}' is invalid: Invalid scalar resource: value < 0")


def _check_ranges(name: str, given: list[Range]) -> None:
    for i, (begin, end) in enumerate(given):
        if begin > end:
            raise ResourceError(f"Resource '{name}' is invalid: Invalid ranges resource: begin > end "
                                f"([{begin}-{end}])")
        for other_begin, other_end in given[i + 1:]:
            if begin <= other_end and other_begin <= end:
                raise ResourceError(f"Resource '{name}' is invalid: Invalid ranges resource: overlapping "
                                    f"ranges ([{begin}-{end}] and [{other_begin}-{other_end}])")


@functools.lru_cache(maxsize=4096)   # a handful of names, sorted for every offer
def _order(key: str) -> tuple[int, str, str]:
    known = ("cpus", "gpus", "mem", "disk")
    name = base_name(key)
    return (known.index(name), name, key) if name in known else (len(known), name, key)


def _static(role: str, part: str) -> Reservation:
    if not _ROLE.fullmatch(role) or role in (".", ".."):
        raise ResourceError(f"bad resource {part!r}: {role!r} is not a role name (letters, digits, '.', '_', "
                            "'-')")
    return Reservation(role, "STATIC")


_ROLE = re.compile(r"[A-Za-z0-9._-]+")


def _qualified(name: str, resource: Mapping[str, Any]) -> str:
    """The name a resource with a reservation or a DiskInfo is kept under."""
    try:
        reservation = reservation_from_json(resource)
    except ReservationError as exc:
        raise ResourceError(f"resource {name!r}: {exc}") from None
    try:   # Mesos's own texts for a DiskInfo it refuses
        volume = volume_from_json(name, resource)
    except ReservationError as exc:
        raise ResourceError(str(exc)) from None
    if volume is not None and reservation is None:
        raise ResourceError("Invalid DiskInfo: Persistent volumes cannot be created from unreserved resources")
    return qualify(name, reservation, volume)


def _fields(key: str) -> dict[str, Any]:
    if not is_reserved(key):
        return {"role": "*"}
    _, reservation, volume = split(key)
    fields = json_fields(reservation)
    if volume is not None:
        fields["disk"] = volume.to_json()
        if volume.shared:
            fields["shared"] = {}
    return fields


def _text_name(key: str) -> str:
    """As Mesos prints a resource's name: `disk(reservations: [(DYNAMIC,ml,ops)])[v1:data]`."""
    name, reservation, volume = split(key)
    if reservation is None:
        return name
    text = f"{name}(reservations: [{reservation.text()}])"
    if volume is None:
        return text
    return f"{text}[{volume.id}:{volume.container_path}]" + ("<SHARED>" if volume.shared else "")


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def _parse_ranges(name: str, text: str) -> list[Range]:
    body = text.strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise ResourceError(f"bad ranges for {name!r}: {text!r} (expected [B-E, ...])")
    out: list[Range] = []
    for part in filter(None, (p.strip() for p in body[1:-1].split(","))):
        b, sep, e = part.partition("-")
        try:
            lo, hi = int(b), int(e if sep else b)
        except ValueError:
            raise ResourceError(f"bad range {part!r} in {name!r}") from None
        if hi < lo:
            raise ResourceError(f"bad range {part!r} in {name!r}: end before begin")
        out.append((lo, hi))
    return out


def parse_attributes(text: str) -> list[dict[str, Any]]:
    """Mesos attributes from `rack:r1;zone:a;speed:2.5` -> TEXT / SCALAR attribute JSON."""
    out: list[dict[str, Any]] = []
    for part in filter(None, (p.strip() for p in (text or "").split(";"))):
        name, sep, val = part.partition(":")
        if not sep or not name.strip():
            raise ResourceError(f"bad attribute {part!r}: expected NAME:VALUE")
        name, val = name.strip(), val.strip()
        try:
            out.append({"name": name, "type": "SCALAR", "scalar": {"value": float(val)}})
        except ValueError:
            if val.startswith("["):
                rng = [{"begin": b, "end": e} for b, e in _parse_ranges(name, val)]
                out.append({"name": name, "type": "RANGES", "ranges": {"range": rng}})
            elif val.startswith("{"):
                items = [x.strip() for x in val.strip("{}").split(",") if x.strip()]
                out.append({"name": name, "type": "SET", "set": {"item": items}})
            else:
                out.append({"name": name, "type": "TEXT", "text": {"value": val}})
    return out


def attributes_dict(attrs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The flat {name: value} shape of /master/state's `attributes`."""
    out: dict[str, Any] = {}
    for a in attrs:
        kind = a.get("type")
        if kind == "TEXT":
            out[a["name"]] = a["text"]["value"]
        elif kind == "SCALAR":
            out[a["name"]] = a["scalar"]["value"]
        elif kind == "RANGES":
            out[a["name"]] = "[" + ", ".join(f"{r['begin']}-{r['end']}" for r in a["ranges"]["range"]) + "]"
        elif kind == "SET":
            out[a["name"]] = "{" + ",".join(a["set"]["item"]) + "}"
    return out
