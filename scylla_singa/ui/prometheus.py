"""Prometheus text exposition format 0.0.4, written by hand (no client library).

    render([Metric("scylla_jobs", "gauge", "Jobs by state.", [({"state": "RUNNING"}, 2)])])

gives

    # HELP scylla_jobs Jobs by state.
    # TYPE scylla_jobs gauge
    scylla_jobs{state="RUNNING"} 2

Names and label names are checked against the format's grammar (ValueError
otherwise); label values and help text are escaped as the format says.
A family with no samples still gets its HELP and TYPE lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
KINDS = ("counter", "gauge", "untyped")
NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

Sample = tuple[Mapping[str, object], float]


@dataclass
class Metric:
    """One metric family: a name, a kind, a help line, and labelled samples."""

    name: str
    kind: str
    help: str
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not NAME_RE.fullmatch(self.name):
            raise ValueError(f"invalid metric name {self.name!r}")
        if self.kind not in KINDS:
            raise ValueError(f"metric kind must be one of {', '.join(KINDS)}, not {self.kind!r}")

    def add(self, value: float, **labels: object) -> "Metric":
        self.samples.append((labels, value))
        return self


def format_value(value: float) -> str:
    """Integers without a decimal point, floats with repr precision, NaN and +Inf/-Inf as the format spells them."""
    v = float(value)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


def escape_label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(labels: Mapping[str, object]) -> str:
    if not labels:
        return ""
    for name in labels:
        if not LABEL_RE.fullmatch(name) or name.startswith("__"):
            raise ValueError(f"invalid label name {name!r}")
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items()) + "}"


def render(metrics: Iterable[Metric]) -> str:
    """The exposition text of `metrics`, families in the order given; ValueError on a duplicate family."""
    lines: list[str] = []
    seen: set[str] = set()
    for m in metrics:
        if m.name in seen:
            raise ValueError(f"metric family {m.name!r} rendered twice")
        seen.add(m.name)
        lines.append(f"# HELP {m.name} {escape_help(m.help)}")
        lines.append(f"# TYPE {m.name} {m.kind}")
        for labels, value in m.samples:
            lines.append(f"{m.name}{_labels(labels)} {format_value(value)}")
    return "\n".join(lines) + "\n"
