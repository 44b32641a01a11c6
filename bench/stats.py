"""Statistics and number formatting for the benchmarks (pure; no numpy needed).

Every measurement is reported as its median with a spread (p10-p90 and the
interquartile range); ratios compare "ours" to an anchor measured or
published for the same quantity.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between ranks (numpy's default)."""
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q} is outside 0-100")
    xs = sorted(samples)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True)
class Summary:
    """Median and spread of one set of samples."""

    n: int
    median: float
    p10: float
    p90: float
    q1: float
    q3: float
    min: float
    max: float
    mean: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    def scaled(self, factor: float) -> "Summary":
        """The same summary in other units (e.g. seconds -> milliseconds)."""
        return Summary(self.n, *(getattr(self, f) * factor for f in
                                 ("median", "p10", "p90", "q1", "q3", "min", "max", "mean")))


def summarize(samples: Iterable[float]) -> Summary:
    """Median, p10/p90, quartiles, min/max and mean; ValueError when there are no samples."""
    xs = [float(x) for x in samples]
    if not xs:
        raise ValueError("summary of no samples")
    return Summary(len(xs), percentile(xs, 50), percentile(xs, 10), percentile(xs, 90), percentile(xs, 25),
                   percentile(xs, 75), min(xs), max(xs), sum(xs) / len(xs))


def summary_from(d: dict) -> Summary:
    """A Summary back from `to_dict()` output (results JSON)."""
    return Summary(**{k: d[k] for k in ("n", "median", "p10", "p90", "q1", "q3", "min", "max", "mean")})


def ratio(ours: float | None, anchor: float | None) -> float | None:
    """ours / anchor, or None when either is missing or the anchor is zero."""
    if ours is None or anchor is None or anchor == 0:
        return None
    return ours / anchor


def fmt_ratio(r: float | None) -> str:
    """A ratio as `0.42x`; `-` when unknown."""
    if r is None:
        return "-"
    if r >= 100:
        return f"{r:.0f}x"
    if r >= 10:
        return f"{r:.1f}x"
    return f"{r:.2f}x"


def fmt_num(x: float | None, digits: int = 3) -> str:
    """A number with `digits` significant digits and thousands separators; `-` when unknown."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - mag)
    return f"{x:,.{decimals}f}"


def fmt_time(seconds: float | None) -> str:
    """A duration in the unit that reads best: 12.3 us, 4.56 ms, 1.23 s."""
    if seconds is None:
        return "-"
    a = abs(seconds)
    if a < 1e-3:
        return f"{fmt_num(seconds * 1e6)} us"
    if a < 1:
        return f"{fmt_num(seconds * 1e3)} ms"
    return f"{fmt_num(seconds)} s"


def fmt_spread(s: Summary, fmt=fmt_time) -> str:
    """`p10-p90` of a summary in the given format."""
    return f"{fmt(s.p10)} - {fmt(s.p90)}"


def verdict(value: float | None, goal: float | None, lower_is_better: bool = True) -> str:
    """`met` / `missed` against a goal, or `-` when either is unknown."""
    if value is None or goal is None:
        return "-"
    ok = value <= goal if lower_is_better else value >= goal
    return "met" if ok else "missed"
