"""The resources placement reasons about, as a small immutable vector."""

from __future__ import annotations

from dataclasses import dataclass, fields

from .fit_status import Reason

# Below these, Mesos does not offer or allocate (DESIGN.md section 4); we
# compare with a tolerance so 0.1 + 0.2 CPUs fits in 0.3.
EPSILON = 1e-6


@dataclass(frozen=True)
class ResourceVector:
    """CPUs, memory (MB) and GPUs: what a process consumes on an agent."""

    cpus: float = 0.0
    mem_mb: float = 0.0
    gpus: float = 0.0

    def __add__(self, other: "ResourceVector") -> "ResourceVector":
        return ResourceVector(self.cpus + other.cpus, self.mem_mb + other.mem_mb, self.gpus + other.gpus)

    def __sub__(self, other: "ResourceVector") -> "ResourceVector":
        return ResourceVector(self.cpus - other.cpus, self.mem_mb - other.mem_mb, self.gpus - other.gpus)

    def shortfall(self, need: "ResourceVector") -> dict[str, tuple[float, float]]:
        """Each resource where `need` exceeds self: name -> (needed, available)."""
        short = {}
        for f in fields(self):
            have, want = getattr(self, f.name), getattr(need, f.name)
            if want > have + EPSILON:
                short[f.name] = (want, have)
        return short

    def fits(self, need: "ResourceVector") -> bool:
        return not self.shortfall(need)

    def dominant_share(self, total: "ResourceVector") -> float:
        """The largest fraction of `total` this uses (0 when total is empty)."""
        shares = [getattr(self, f.name) / getattr(total, f.name)
                  for f in fields(self) if getattr(total, f.name) > EPSILON]
        return max(shares, default=0.0)


UNITS = {"cpus": "", "mem_mb": " MB", "gpus": ""}
NAMES = {"cpus": "cpus", "mem_mb": "mem", "gpus": "gpus"}


def shortfall_reasons(short: dict[str, tuple[float, float]]) -> tuple[Reason, ...]:
    """One reason per short resource: `insufficient cpus` (need 2, free 1), `insufficient mem` (...)."""
    return tuple(Reason(f"insufficient {NAMES[k]}", f"need {need:g}{UNITS[k]}, free {have:g}{UNITS[k]}")
                 for k, (need, have) in short.items())
