"""Quota: per-role guarantees and limits on scalar resources, as Mesos 1.12's UPDATE_QUOTA sets them. Pure.

A role's *limit* bounds what it may hold (tasks and outstanding offers):
the allocator offers it no more than `limit - consumed` of a limited scalar.
A role's *guarantee* is what the cluster keeps within its reach: roles
still below their guarantees are offered first, and the other roles are
offered only what leaves enough unallocated to cover every guarantee still
unmet (Mesos's "headroom"). Guarantees never exceed limits.

Here: the checks of a QuotaConfig (Mesos's texts), and the arithmetic the
allocator and the operator API share. Who holds what is the allocator's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scylla_singa.mesos.api.call_validation import role_problem
from scylla_singa.mesos.api.resources import Resources

EXABYTE_IN_MB = 1024 ** 4          # Mesos's bound on a quota of mem or disk (in MB)
OTHER_BOUND = 1000 ** 4            # and on any other resource


class QuotaInvalid(ValueError):
    """A QuotaConfig refused (400 with this text)."""


@dataclass(frozen=True)
class Quota:
    """A role's guarantees and limits on named scalars (an absent name: no guarantee, no limit)."""

    guarantees: Mapping[str, float] = field(default_factory=dict)
    limits: Mapping[str, float] = field(default_factory=dict)

    @property
    def is_default(self) -> bool:
        """No guarantee and no limit: the same as no quota (UPDATE_QUOTA with both empty removes one)."""
        return not self.guarantees and not self.limits

    def config(self, role: str) -> dict[str, Any]:
        """As a v1 QuotaConfig (JSON form: a map of name to Value.Scalar)."""
        out: dict[str, Any] = {"role": role}
        if self.guarantees:   # Mesos leaves an empty map out
            out["guarantees"] = {k: {"value": v} for k, v in sorted(self.guarantees.items())}
        if self.limits:
            out["limits"] = {k: {"value": v} for k, v in sorted(self.limits.items())}
        return out


def quota_from_config(config: Mapping[str, Any]) -> tuple[str, Quota]:
    """The role and Quota of a v1 QuotaConfig, checked as Mesos checks it; QuotaInvalid says what is wrong."""
    role = config.get("role")
    if not isinstance(role, str) or not role:
        raise QuotaInvalid("'QuotaConfig.role' must be set")
    problem = role_problem(role)
    if problem:
        raise QuotaInvalid(f"Invalid 'QuotaConfig.role': {problem}")
    guarantees = _scalars(config.get("guarantees"), "guarantees", "guarantee")
    limits = _scalars(config.get("limits"), "limits", "limit")
    over = {k: v for k, v in guarantees.items() if v > limits.get(k, math.inf)}
    if over:
        raise QuotaInvalid(f"'QuotaConfig.guarantees' {_show(guarantees)} is not contained within the "
                           f"'QuotaConfig.limits' {_show(limits)}")
    return role, Quota(guarantees, limits)


def _scalars(given: Any, field_name: str, word: str) -> dict[str, float]:
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise QuotaInvalid(f"Invalid 'QuotaConfig.{field_name}': a map of resource name to scalar is expected")
    out: dict[str, float] = {}
    for name, scalar in given.items():
        amount = scalar.get("value") if isinstance(scalar, Mapping) else None
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            raise QuotaInvalid(f"Invalid {word} configuration {{'{name}': {amount!r}}}: a scalar value is expected")
        bound = EXABYTE_IN_MB if name in ("mem", "disk") else OTHER_BOUND
        if amount > bound:
            what = "1 exabyte" if bound == EXABYTE_IN_MB else "1 trillion"
            raise QuotaInvalid(f"Invalid 'QuotaConfig.{field_name}': {{ {name}: {_num(amount)} }} is invalid: "
                               f"values greater than {what} ({bound}) are not supported")
        if not math.isfinite(amount) or amount < 0:
            raise QuotaInvalid(f"Invalid {word} configuration {{'{name}': {_num(amount)}}}: "
                               "Invalid scalar value: it must be a finite, non-negative number")
        out[str(name)] = float(amount)
    return out


def quota_from_request(request: Mapping[str, Any]) -> tuple[str, Quota]:
    """SET_QUOTA's legacy QuotaRequest (role, guarantee as Resources): the guarantee is also the limit, as
    Mesos 1.12 takes it."""
    try:
        guarantee = Resources.from_json(request.get("guarantee") or [])
    except ValueError as exc:
        raise QuotaInvalid(f"Invalid QuotaRequest: {exc}") from None
    if guarantee.ranges or guarantee.sets:
        raise QuotaInvalid("Invalid QuotaRequest: quota guarantees are scalar resources")
    amounts = {k: {"value": v} for k, v in guarantee.scalars.items()}
    return quota_from_config({"role": request.get("role"), "guarantees": amounts, "limits": amounts})


def unmet(quota: Quota, consumed: Mapping[str, float]) -> dict[str, float]:
    """What the role still lacks of its guarantees (positive parts only)."""
    return {k: v - consumed.get(k, 0.0) for k, v in quota.guarantees.items() if v - consumed.get(k, 0.0) > 1e-9}


def within_limits(quota: Quota, consumed: Mapping[str, float]) -> dict[str, float]:
    """How much more of each limited scalar the role may hold (0 where it is at or over its limit)."""
    return {k: max(0.0, v - consumed.get(k, 0.0)) for k, v in quota.limits.items()}


def cap(free: Resources, bounds: Mapping[str, float]) -> Resources:
    """`free` with each bounded scalar cut down to its bound (ranges and sets as they are)."""
    if not any(free.scalars.get(k, 0.0) > b for k, b in bounds.items()):
        return free
    scalars = {k: min(v, bounds[k]) if k in bounds else v for k, v in free.scalars.items()}
    return Resources(scalars, free.ranges, free.sets)


def add_amounts(into: dict[str, float], amounts: Mapping[str, float], sign: float = 1.0) -> None:
    for k, v in amounts.items():
        into[k] = into.get(k, 0.0) + sign * v


def sum_amounts(parts: Iterable[Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in parts:
        add_amounts(out, part)
    return out


def _show(amounts: Mapping[str, float]) -> str:
    """A map of scalars as Mesos prints it: `{ cpus: 5, mem: 10 }`."""
    return "{ " + ", ".join(f"{k}: {_num(v)}" for k, v in sorted(amounts.items())) + " }" if amounts else "{}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))
