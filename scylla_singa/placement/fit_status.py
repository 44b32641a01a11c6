"""'Does not fit' as a value: a code and structured reasons, never an exception.

Modelled on the Kubernetes scheduling framework's Status: filters return one
per (process, agent), the engine collects them so a waiting job can say why.
A reason is (kind, detail): the kind groups agents rejected for the same
thing ("insufficient cpus"), the detail is this agent's numbers; nobody
parses reasons back out of their text.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Code(Enum):
    SUCCESS = "Success"
    # Not now: more resources may be offered later.
    UNSCHEDULABLE = "Unschedulable"
    # Never on this agent whatever is freed (a constraint, or the agent is too small).
    UNRESOLVABLE = "UnschedulableAndUnresolvable"
    ERROR = "Error"


@dataclass(frozen=True)
class Reason:
    """Why something does not fit: `kind` (what; agents are counted by it), `detail` (the numbers)."""

    kind: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.kind} ({self.detail})" if self.detail else self.kind


@dataclass(frozen=True)
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[Reason, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    def __str__(self) -> str:
        return "; ".join(map(str, self.reasons)) if self.reasons else self.code.value


OK = Status()


def unschedulable(plugin: str, *reasons: Reason) -> Status:
    return Status(Code.UNSCHEDULABLE, tuple(reasons), plugin)


def unresolvable(plugin: str, *reasons: Reason) -> Status:
    return Status(Code.UNRESOLVABLE, tuple(reasons), plugin)
