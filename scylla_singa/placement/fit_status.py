"""'Does not fit' as a value: a code and the reasons, never an exception.

Modelled on the Kubernetes scheduling framework's Status: filters return one
per (process, agent), the engine collects them so a waiting job can say why.
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
class Status:
    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def ok(self) -> bool:
        return self.code is Code.SUCCESS

    def __str__(self) -> str:
        return "; ".join(self.reasons) if self.reasons else self.code.value


OK = Status()


def unschedulable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, tuple(reasons), plugin)


def unresolvable(plugin: str, *reasons: str) -> Status:
    return Status(Code.UNRESOLVABLE, tuple(reasons), plugin)
