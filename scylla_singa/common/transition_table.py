"""Lifecycles as explicit transition tables: the string-table machine.

Each lifecycle has one entry point, `handle(event) -> list[instruction]`.
A table maps (state, event kind) to (next state, instruction kinds); an
unknown pair raises `InvalidTransition` carrying the history. The shells
execute the instructions; these classes do no I/O. Used today by the Mesos
lifecycles (an agent's tasks: mesos/agent/task_lifecycle.py; frameworks and
agent links on the master: mesos/master/registration_lifecycles.py).
docs/design.md ("Lifecycles") says how this becomes the one form of every
lifecycle (the framework core's and the runtime's too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

class InvalidTransition(RuntimeError):
    """An event that the current state does not accept; `history` is the list of (state, event)."""

    def __init__(self, what: str, state: str, event: str, history: list[tuple[str, str]]) -> None:
        super().__init__(f"{what}: event {event} is illegal in state {state}; history {history}")
        self.history = history


@dataclass(frozen=True)
class Event:
    """A stimulus: `kind` plus optional data (reason, message, exit code, ...)."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Instruction:
    """What the shell must do: `kind` (e.g. "update", "stop", "cleanup") plus data."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


Table = dict[tuple[str, str], tuple[str | None, tuple[str, ...]]]


class Lifecycle:
    """A state machine driven by a Table; `None` as next state means "stay"."""

    table: Table = {}
    what = "lifecycle"

    def __init__(self, state: str) -> None:
        self.state = state
        self.history: list[tuple[str, str]] = []

    def handle(self, event: Event) -> list[Instruction]:
        """Apply `event`; return the instructions for the shell. Raises InvalidTransition."""
        key = (self.state, event.kind)
        if key not in self.table:
            key = ("*", event.kind)
        if key not in self.table:
            raise InvalidTransition(self.what, self.state, event.kind, list(self.history))
        nxt, kinds = self.table[key]
        self.history.append((self.state, event.kind))
        prev, self.state = self.state, (nxt or self.state)
        return [self.instruction(k, prev, event) for k in kinds]

    def instruction(self, kind: str, prev: str, event: Event) -> Instruction:
        return Instruction(kind, dict(event.data))
