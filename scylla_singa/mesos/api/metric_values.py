"""Metric values both the master and the agent write in /metrics/snapshot: timers and system/*.

A Mesos timer is a key with the last value plus `/count`, `/min`, `/max`
and percentiles over a window of recent values; system/* describes the
machine. Pure but for reading the machine's load and memory.
"""

from __future__ import annotations

import os

PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999), ("p9999", 0.9999))


def percentiles(key: str, values: list[float]) -> dict[str, float]:
    """A Mesos timer: the last value, count, min, max and percentiles (linear interpolation) of a window
    (all 0 with no values: the keys are always there)."""
    out = {key: values[-1] if values else 0.0, f"{key}/count": float(len(values))}
    ordered = sorted(values) or [0.0]
    out[f"{key}/max"], out[f"{key}/min"] = ordered[-1], ordered[0]
    for name, q in PERCENTILES:
        pos = q * (len(ordered) - 1)
        low = int(pos)
        high = min(low + 1, len(ordered) - 1)
        out[f"{key}/{name}"] = ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
    return out


def system_metrics() -> dict[str, float]:
    """system/*: this machine's CPUs, load and memory."""
    one, five, fifteen = os.getloadavg()
    page = os.sysconf("SC_PAGE_SIZE")
    return {"system/cpus_total": float(os.cpu_count() or 1), "system/load_15min": fifteen,
            "system/load_1min": one, "system/load_5min": five,
            "system/mem_free_bytes": float(page * os.sysconf("SC_AVPHYS_PAGES")),
            "system/mem_total_bytes": float(page * os.sysconf("SC_PHYS_PAGES"))}
