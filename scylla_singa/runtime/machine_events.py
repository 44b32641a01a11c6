"""Events into the runtime's state machines and the instructions they return.

Workers and servers (worker.py, server.py) take `Begin` and `Deliver` and
return `Send`, `Report`, `SaveSlice` and `Finished`; their tables are keyed
by each event's `key` ("BEGIN", or the delivered message's kind). The
process machine (process.py) takes the `Proc*` events and `CheckpointWritten`
from the shell, routes its entities' instructions, and returns only shell
instructions: `SendTo`, `Report`, `WriteCheckpoint`, `WriteMarker`, `Log`
and `Exit`. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .messages import Msg

# ---- events into workers and servers


@dataclass(frozen=True)
class Begin:
    """Go: workers pull their first values, servers of groups > 0 fetch the master copy."""

    @property
    def key(self) -> str:
        return "BEGIN"

    def __str__(self) -> str:
        return "BEGIN"


@dataclass(frozen=True)
class Deliver:
    msg: Msg

    @property
    def key(self) -> str:
        return self.msg.kind

    def __str__(self) -> str:
        return repr(self.msg)


# What a worker or server can be given: Begin, and a message of each kind entities send each other.
ENTITY_EVENT_KEYS = ("BEGIN", "PULL", "PARAM", "GRAD", "DONE", "FINAL_PULL", "SYNC", "SYNC_REPLY")


# ---- instructions out of workers and servers


@dataclass(frozen=True)
class Send:
    msg: Msg


@dataclass(frozen=True)
class Report:
    """A PROGRESS or FINAL line (kind) with its JSON payload."""

    kind: str
    payload: dict


@dataclass(frozen=True)
class Finished:
    """The entity `who` has nothing more to do."""

    who: str


@dataclass(frozen=True)
class SaveSlice:
    """A server's slice to checkpoint once `step` steps are done."""

    step: int
    server: str
    lo: int
    hi: int
    values: np.ndarray
    state: dict = field(default_factory=dict)


# ---- events into the process machine (from the shell)


@dataclass(frozen=True)
class ProcStarted:
    now: float


@dataclass(frozen=True)
class ProcTick:
    now: float


@dataclass(frozen=True)
class ProcReceived:
    msg: Msg
    now: float


@dataclass(frozen=True)
class ProcRunLocal:
    """Deliver one queued local message (the shell interleaves these with socket polls)."""

    now: float


@dataclass(frozen=True)
class CheckpointWritten:
    step: int
    ok: bool
    error: str = ""
    now: float | None = None  # None: the write says nothing about the time


ProcEvent = ProcStarted | ProcTick | ProcReceived | ProcRunLocal | CheckpointWritten


# ---- instructions out of the process machine (to the shell)


@dataclass(frozen=True)
class SendTo:
    proc: int
    msg: Msg


@dataclass(frozen=True)
class WriteCheckpoint:
    step: int
    slices: tuple[SaveSlice, ...]


@dataclass(frozen=True)
class WriteMarker:
    step: int


@dataclass(frozen=True)
class Log:
    message: str


@dataclass(frozen=True)
class Exit:
    code: int
    message: str = ""
