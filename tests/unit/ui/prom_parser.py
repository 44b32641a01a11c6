"""A strict parser of the Prometheus text exposition format 0.0.4, for checking what we serve.

Stricter than Prometheus where being strict catches our bugs: every sample
belongs to a family announced by `# TYPE` (once, before its samples), a
family's lines are contiguous, no sample repeats, names and label names
follow the grammar, label values use only the three escapes, and the text
ends with a newline. Raises ExpositionError naming the line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
VALUE = r"(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|NaN|[+-]Inf)"
SAMPLE_RE = re.compile(rf"^({NAME})(\{{.*\}})? ({VALUE})(?: (-?\d+))?$")
LABEL_RE = re.compile(rf'\s*({LABEL})="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)')
HELP_RE = re.compile(rf"^# HELP ({NAME}) ((?:[^\\\n]|\\[\\n])*)$")
TYPE_RE = re.compile(rf"^# TYPE ({NAME}) (counter|gauge|histogram|summary|untyped)$")
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count", "")}


class ExpositionError(ValueError):
    pass


@dataclass
class Family:
    name: str
    kind: str = "untyped"
    help: str = ""
    typed: bool = False
    samples: dict[tuple[str, frozenset], float] = field(default_factory=dict)

    def value(self, **labels: str) -> float:
        return self.samples[(self.name, frozenset(labels.items()))]

    def values(self) -> list[tuple[dict[str, str], float]]:
        return [(dict(k[1]), v) for k, v in self.samples.items()]


def _labels(text: str, lineno: int) -> frozenset:
    body = text[1:-1]
    out: dict[str, str] = {}
    pos = 0
    while pos < len(body):
        m = LABEL_RE.match(body, pos)
        if not m:
            raise ExpositionError(f"line {lineno}: bad label set {text!r}")
        name, raw = m.group(1), m.group(2)
        if name in out:
            raise ExpositionError(f"line {lineno}: label {name} twice")
        out[name] = raw.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        pos = m.end()
    return frozenset(out.items())


def _family_of(sample: str, families: dict[str, Family], current: Family | None) -> Family | None:
    if current is None:
        return None
    if sample == current.name:
        return current
    for suffix in SUFFIXES.get(current.kind, ()):
        if suffix and sample == current.name + suffix:
            return current
    return None


def parse(text: str) -> dict[str, Family]:
    """Families by name; ExpositionError at the first line that breaks the format."""
    if not text.endswith("\n"):
        raise ExpositionError("the exposition must end with a newline")
    families: dict[str, Family] = {}
    current: Family | None = None
    closed: set[str] = set()
    for lineno, line in enumerate(text[:-1].split("\n"), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            if m := HELP_RE.match(line):
                name = m.group(1)
                fam = _open(families, closed, current, name, lineno)
                if fam.help:
                    raise ExpositionError(f"line {lineno}: second HELP for {name}")
                fam.help = m.group(2).replace("\\n", "\n").replace("\\\\", "\\")
                current = fam
            elif m := TYPE_RE.match(line):
                name = m.group(1)
                fam = _open(families, closed, current, name, lineno)
                if fam.samples or fam.typed:
                    raise ExpositionError(f"line {lineno}: TYPE for {name} after its samples or twice")
                fam.kind = m.group(2)
                fam.typed = True
                current = fam
            elif line.startswith("# HELP") or line.startswith("# TYPE"):
                raise ExpositionError(f"line {lineno}: malformed {line!r}")
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            raise ExpositionError(f"line {lineno}: not a sample: {line!r}")
        name, labels, value = m.group(1), m.group(2), m.group(3)
        fam = _family_of(name, families, current)
        if fam is None:
            raise ExpositionError(f"line {lineno}: sample {name} outside its family's TYPE/HELP block")
        key = (name, _labels(labels, lineno) if labels else frozenset())
        if key in fam.samples:
            raise ExpositionError(f"line {lineno}: sample {name}{labels or ''} repeated")
        v = float(value.replace("Inf", "inf").replace("NaN", "nan"))
        if fam.kind == "counter" and not math.isnan(v) and v < 0:
            raise ExpositionError(f"line {lineno}: counter {name} is negative")
        fam.samples[key] = v
    return families


def _open(families: dict[str, Family], closed: set[str], current: Family | None, name: str, lineno: int) -> Family:
    if current is not None and current.name != name:
        closed.add(current.name)
    if name in closed:
        raise ExpositionError(f"line {lineno}: family {name} is split (its lines must be contiguous)")
    return families.setdefault(name, Family(name))
