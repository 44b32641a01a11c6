"""Placement policies: YAML files parsed into frozen, validated pipelines.

The built-in ones are the package scylla_singa.placement.builtin_policies:
the repository's top-level policies/ directory, which pyproject.toml maps
into the package, so a checkout (editable install) and an installed wheel
find them the same way.

A policy names its process order, filter plugins, weighted score plugins and
constraints (attribute match/exclude, hostname include/exclude, max
processes per agent). Every mistake in a policy file is a PolicyError with
FILE:LINE:COL and what to write instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from scylla_singa.jobconf.errors import PositionedError
from scylla_singa.jobconf.user_files import KIB, read_user_text
from scylla_singa.placement.plugins.base import FilterPlugin, ScorePlugin
from .order import ORDERS
from .registry import DEFAULT_REGISTRY, Registry
from .yamlmarks import KEY, Path as YPath, YamlRefusal, load_with_marks, position

BUILTIN_PACKAGE = "scylla_singa.placement.builtin_policies"
DEFAULT_POLICY = "spread"
_TOP_KEYS = {"name", "description", "order", "filters", "scores", "constraints", "refine", "starts"}
# The most a policy file may weigh: the built-in ones are under 2 KiB, and YAML parsing is not free.
MAX_POLICY_BYTES = 64 * KIB
# What a plugin's from_args may raise on arguments of the wrong shape: each becomes a positioned PolicyError.
_PLUGIN_ARG_ERRORS = (ValueError, TypeError, KeyError, AttributeError, OverflowError)
# How many policy files one policy's `starts` may lead through (each loads the next).
MAX_STARTS_CHAIN = 8


class PolicyError(PositionedError):
    """A policy file that cannot be used."""


@dataclass(frozen=True)
class Start:
    """One greedy pass: a process order and weighted scores."""

    name: str
    order: str
    scores: tuple[tuple[ScorePlugin, float], ...]


@dataclass(frozen=True)
class Policy:
    """A wired placement pipeline.

    `starts` are further greedy passes (another policy's order and scores,
    always under this policy's filters); with `refine`, each result goes
    through the cut-lowering local search and the placement crossing the
    fewest bytes wins.
    """

    name: str
    description: str
    order: str
    filters: tuple[FilterPlugin, ...]
    scores: tuple[tuple[ScorePlugin, float], ...]
    source: str = ""
    refine: bool = False
    starts: tuple[Start, ...] = ()

    @property
    def own_start(self) -> Start:
        return Start(self.name, self.order, self.scores)


def builtin_policy_dir() -> Path:
    """The directory holding the built-in policy files (policies/ of a checkout, or inside the installed wheel)."""
    return Path(str(resources.files(BUILTIN_PACKAGE)))


def builtin_policy_names() -> list[str]:
    return sorted(p.stem for p in builtin_policy_dir().glob("*.yaml"))


def load_policy(name_or_path: str, registry: Registry = DEFAULT_REGISTRY, _loading: tuple[str, ...] = ()) -> Policy:
    """A policy by built-in name (builtin_policy_dir()/NAME.yaml) or by file path. Raises PolicyError.

    The file is read through read_user_text: at most MAX_POLICY_BYTES of UTF-8.
    `_loading` is the chain of policies whose `starts` led here (a cycle is refused).
    """
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        path = builtin_policy_dir() / f"{name_or_path}.yaml"
        if not path.exists():
            raise PolicyError(f"no policy named {name_or_path!r}; built-in: {', '.join(builtin_policy_names())}, "
                              "or give the path of a YAML file")
    if str(path.resolve()) in _loading:
        raise PolicyError(f"{name_or_path!r} starts from this policy again: `starts` may not form a cycle")
    if len(_loading) >= MAX_STARTS_CHAIN:
        raise PolicyError(f"`starts` chains more than {MAX_STARTS_CHAIN} policy files; name the passes directly")
    try:
        text = read_user_text(path, MAX_POLICY_BYTES, PolicyError, "a policy")
    except OSError as exc:
        raise PolicyError(f"cannot read policy file: {exc.strerror or exc}", str(name_or_path)) from None
    return parse_policy(text, str(path), registry, _loading)


def parse_policy(text: str, source: str = "policy.yaml", registry: Registry = DEFAULT_REGISTRY,
                 _loading: tuple[str, ...] = ()) -> Policy:
    """Parse and validate policy YAML. Raises PolicyError pointing at the offending line."""
    try:
        data, marks = load_with_marks(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise PolicyError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", source, line, col) from None
    except YamlRefusal as exc:
        raise PolicyError(exc.message, source, exc.line, exc.col) from None
    return _Builder(source, marks, registry, _loading + (str(Path(source).resolve()),)).policy(data)


class _Builder:
    def __init__(self, source: str, marks: dict[YPath, tuple[int, int]], registry: Registry,
                 loading: tuple[str, ...]) -> None:
        self.source, self.marks, self.registry, self.loading = source, marks, registry, loading

    def fail(self, path: YPath, message: str) -> PolicyError:
        line, col = position(self.marks, path)
        return PolicyError(message, self.source, line, col)

    def policy(self, data: Any) -> Policy:
        if not isinstance(data, dict):
            raise self.fail((), "a policy is a mapping with name, order, filters, scores and constraints")
        for key in data:
            if key not in _TOP_KEYS:
                raise self.fail((key, KEY), f"unknown key {key!r}; expected one of {', '.join(sorted(_TOP_KEYS))}")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise self.fail(("name",), "a policy needs a name: a non-empty string")
        order = data.get("order", "id")
        if not isinstance(order, str) or order not in ORDERS:
            raise self.fail(("order",), f"order must be one of {', '.join(ORDERS)}, got {order!r}")
        filters = [self.plugin(("filters", i), item, "filter")[0] for i, item in enumerate(self.items(data, "filters"))]
        scores = [self.plugin(("scores", i), item, "score") for i, item in enumerate(self.items(data, "scores"))]
        filters += self.constraints(data.get("constraints") or {})
        if not any(f.name in ("resources-fit", "singa11-cpus") for f in filters):
            raise self.fail(("filters",), "a policy must keep CPU and memory within offers: "
                                          "list resources-fit (or singa11-cpus) under filters")
        filters.sort(key=lambda f: f.rank)  # each filter owns its place: cheap constraints first (base.py)
        refine = data.get("refine", False)
        if not isinstance(refine, bool):
            raise self.fail(("refine",), f"refine is true or false, got {refine!r}")
        return Policy(name, str(data.get("description", "")), order, tuple(filters),
                      tuple((p, w) for p, w in scores), self.source, refine, self.starts(data.get("starts") or []))

    def items(self, data: dict[Any, Any], key: str) -> list[Any]:
        """The list under `key` (none: empty); anything else is refused where it stands."""
        value = data.get(key) or []
        if not isinstance(value, list):
            raise self.fail((key,), f"{key} is a list of plugins, e.g. [resources-fit] or "
                                    "[{name: spread, weight: 10}]")
        return value

    def starts(self, names: Any) -> tuple[Start, ...]:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise self.fail(("starts",), "starts is a list of policy names, e.g. [spread, pack]")
        out = []
        for i, start_name in enumerate(names):
            try:
                other = load_policy(start_name, self.registry, self.loading)
            except PolicyError as exc:
                # the other file's own FILE:LINE:COL, when the problem is inside it
                raise self.fail(("starts", i), str(exc) if exc.path else exc.message) from None
            out.append(other.own_start)
        return tuple(out)

    def plugin(self, path: YPath, item: Any, kind: str) -> tuple[Any, float]:
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise self.fail(path, f"each {kind} is a plugin name or {{name: ..., weight: ..., args: {{...}}}}")
        extra = set(item) - {"name", "weight", "args"}
        if extra:
            raise self.fail(path + (sorted(extra)[0], KEY), f"unknown key {sorted(extra)[0]!r} in a {kind}; "
                                                        "use name, weight, args")
        name = item["name"]
        if self.registry.kind(name) != kind:
            known = [n for n in self.registry.names() if self.registry.kind(n) == kind]
            what = "a " + self.registry.kind(name) + " plugin" if self.registry.kind(name) else "unknown"
            raise self.fail(path + ("name",), f"{name!r} is {what}; {kind} plugins: {', '.join(known)}")
        weight = item.get("weight", 1)
        if kind == "score" and (not isinstance(weight, (int, float)) or isinstance(weight, bool)
                                or not math.isfinite(weight) or weight < 0):
            raise self.fail(path + ("weight",), f"weight must be a number >= 0 (and finite), got {weight!r}")
        try:
            return self.registry.build(name, item.get("args") or {}), float(weight)
        except _PLUGIN_ARG_ERRORS as exc:
            raise self.fail(path + ("args",), str(exc)) from None

    def constraints(self, data: Any) -> list[FilterPlugin]:
        known = self.registry.constraints()
        if not isinstance(data, dict):
            raise self.fail(("constraints",), f"constraints is a mapping: {', '.join(known)}")
        out: list[FilterPlugin] = []
        for key, value in data.items():
            path: YPath = ("constraints", key)
            if key not in known:
                raise self.fail(path + (KEY,), f"unknown constraint {key!r}; one of {', '.join(known)}")
            try:
                out.append(self.registry.build_constraint(key, value))
            except _PLUGIN_ARG_ERRORS as exc:
                raise self.fail(path, str(exc)) from None
        return out
