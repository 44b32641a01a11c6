"""Every lifecycle in scylla-singa is written one way: an explicit transition table.

A machine looks up each event in its `TransitionTable`, keyed by (state,
event type); for the runtime's wire messages the event is the message's
kind. A pair the table lacks raises `InvalidTransition`, naming the machine,
the state, the event and the machine's story (its recent transitions,
newest last): an unexpected event is a bug or a peer breaking the
protocol, and the story is what tells which. No event is ever dropped
silently: a pair that changes nothing is a row that says so.

What a row holds is the machine's business:
- a `Lifecycle` (a task on a Mesos agent, a framework and an agent link on
  the master) holds the next state and the instruction types to emit;
  instructions are typed dataclasses, built from the event's fields of the
  same names;
- the framework's core and a job, and the runtime's worker, server and
  process machines hold the handler that runs (or the next state).

Shells carry out instructions through an `InstructionDispatch`, keyed by
instruction type: a type it has no handler for raises `UnknownInstruction`,
and `require` checks at construction that it covers every type a table can
emit, so a forgotten handler fails at once rather than when first needed.

Stdlib only: the runtime image carries this module.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import fields
from enum import Enum
from typing import Any, ClassVar, Generic, TypeVar

RowT = TypeVar("RowT")


def key_name(key: Any) -> str:
    """How a state or an event key reads in messages: a class by its name, an enum by its value."""
    if isinstance(key, type):
        return key.__name__
    if isinstance(key, Enum):
        return str(key.value)
    return str(key)


class InvalidTransition(RuntimeError):
    """An event the machine's table has no row for in its current state.

    `machine` says which machine (a task id, a worker's address), `state`
    and `event` the pair that has no row, `story` the machine's recent
    transitions, newest last.
    """

    def __init__(self, machine: str, state: str, event: str, story: Iterable[str]) -> None:
        self.machine, self.state, self.event = machine, state, event
        self.story = tuple(story)
        told = "\n  ".join(self.story[-20:]) or "(nothing yet)"
        super().__init__(f"{machine}: no transition from state {state!r} on {event}; "
                         f"story, newest last:\n  {told}")


class UnknownInstruction(TypeError):
    """An instruction a shell has no handler for: a wiring bug, never ignored."""


class Story:
    """A machine's recent history, newest last, bounded: what InvalidTransition shows."""

    def __init__(self, maxlen: int = 64) -> None:
        self._lines: deque[str] = deque(maxlen=maxlen)

    def add(self, line: str) -> None:
        self._lines.append(line)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)


class TransitionTable(Generic[RowT]):
    """(state, event key) -> row, over declared states and event keys.

    Declaring the states and events lets the table refuse a row for a
    state or event that does not exist (a typo fails at import), and lets a
    test enumerate every pair without a row (`missing`).
    """

    def __init__(self, machine: str, states: Iterable[Hashable], events: Iterable[Hashable],
                 rows: Mapping[tuple[Any, Any], RowT]) -> None:
        self.machine = machine
        self.states = tuple(states)
        self.events = tuple(events)
        self.rows = dict(rows)
        stray = [(key_name(s), key_name(e)) for s, e in self.rows if s not in self.states or e not in self.events]
        if stray:
            raise ValueError(f"{machine}: rows for undeclared states or events: {stray}")

    def row(self, state: Any, event: Any, story: Iterable[str], machine: str | None = None,
            shown: str | None = None) -> RowT:
        """The row for (state, event); InvalidTransition when there is none.

        `machine` names the instance (default: the table's name), `shown`
        how the event reads in the error (default: its key).
        """
        try:
            return self.rows[(state, event)]
        except KeyError:
            raise InvalidTransition(machine or self.machine, key_name(state), shown or key_name(event),
                                    story) from None

    def missing(self) -> list[tuple[Any, Any]]:
        """Every declared (state, event) pair with no row: each of them raises InvalidTransition."""
        return [(s, e) for s in self.states for e in self.events if (s, e) not in self.rows]


def instruction_from(kind: type, event: Any, **given: Any) -> Any:
    """An instruction of type `kind` whose fields take the event's fields of the same name (else `given`,
    else their defaults)."""
    for f in fields(kind):
        if f.init and f.name not in given and hasattr(event, f.name):
            given[f.name] = getattr(event, f.name)
    return kind(**given)


# A Lifecycle row: the next state (None: stay; a callable: computed from the event) and the
# instruction types to emit, in order.
NextState = str | None | Callable[[Any], str]
LifecycleRow = tuple[NextState, tuple[type, ...]]


class Lifecycle:
    """A machine whose table rows are (next state, instruction types); `handle` is its one entry point."""

    table: ClassVar[TransitionTable[LifecycleRow]]

    def __init__(self, state: str, name: str = "") -> None:
        self.state = state
        self.name = name or self.table.machine
        self.story = Story()

    def handle(self, event: Any) -> list[Any]:
        """Apply `event`; the instructions for the shell. Raises InvalidTransition."""
        nxt, kinds = self.table.row(self.state, type(event), self.story, self.name)
        prev = self.state
        if callable(nxt):
            nxt = nxt(event)
        self.state = nxt or prev
        self.story.add(f"{prev} --{type(event).__name__}--> {self.state}")
        return [self.instruction(kind, prev, event) for kind in kinds]

    def instruction(self, kind: type, prev: str, event: Any) -> Any:
        return instruction_from(kind, event)


def emitted_types(table: TransitionTable[LifecycleRow]) -> set[type]:
    """Every instruction type a Lifecycle table can emit."""
    return {kind for _, kinds in table.rows.values() for kind in kinds}


class InstructionDispatch:
    """A shell's handlers by instruction type; an instruction of any other type raises UnknownInstruction."""

    def __init__(self, shell: str, handlers: Mapping[type, Callable[..., Any]]) -> None:
        self.shell = shell
        self.handlers = dict(handlers)

    def require(self, kinds: Iterable[type]) -> InstructionDispatch:
        """Fail now if any of `kinds` has no handler; returns self."""
        lacking = sorted(k.__name__ for k in kinds if k not in self.handlers)
        if lacking:
            raise UnknownInstruction(f"{self.shell} has no handler for {', '.join(lacking)}")
        return self

    def __call__(self, instruction: Any, *context: Any) -> Any:
        handler = self.handlers.get(type(instruction))
        if handler is None:
            known = ", ".join(sorted(k.__name__ for k in self.handlers))
            raise UnknownInstruction(f"{self.shell} has no handler for instruction {instruction!r}; "
                                     f"it handles {known}")
        return handler(instruction, *context)
