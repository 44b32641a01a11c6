"""One SINGA process as a state machine: rendezvous, routing, liveness, checkpoints, shutdown.

The shell (main.py) feeds it ProcStarted, ProcTick, ProcReceived,
ProcRunLocal and CheckpointWritten, and executes what it returns (SendTo,
Report, WriteCheckpoint, WriteMarker, Log, Exit). It hosts the process's
workers and servers and routes their messages: to a local entity through
a FIFO queue drained one message per ProcRunLocal (so the shell can poll its
socket in between and a local worker/server pair never starves the peers),
to a remote one as SendTo(process).

    waiting  -- HEARTBEAT seen from every peer --> running
               (the resume step is decided here, identically everywhere:
                the newest checkpoint step every process can resume from)
    running  -- every local worker and server finished, checkpoints
                written --> done (process k > 0 sends PROC_DONE to 0)
    process 0: done and PROC_DONE from all -> commits checkpoints, sends EXIT,
               waits for EXIT_ACK (bounded) -> Exit(0)
    others:    EXIT -> EXIT_ACK, Exit(0)

Liveness: every process heartbeats every peer each `heartbeat_s`. A peer not
heard from for `peer_timeout_s` after the rendezvous, or peers missing
`startup_timeout_s` after start, end the process with exit 3 and a message
naming them; ABORT tells the others at once. Messages of entities that
arrive before the rendezvous are held and delivered after it.

Checkpoints: group-0 servers emit SaveSlice for step N; once every local
group-0 server has, the process writes one file (WriteCheckpoint) and
reports CKPT_WRITTEN to process 0. When every process that hosts a group-0
server has reported N, process 0 writes the step's marker and tells every
other process to write it too (CKPT_COMMIT): a step is resumable only with
its marker. A process reports PROC_DONE only after its writes, on the same
ordered channel, so process 0 has every report before it sends EXIT.

Its transition table (PROCESS_TABLE) is keyed by event type, and for a
received message by its kind (an entity's message is ENTITY_MESSAGE); once
exited, every event is taken and changes nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scylla_singa.common.transition_table import InstructionDispatch, Story, TransitionTable
from .machine_events import (Begin, CheckpointWritten, Deliver, Exit, Finished, Log, ProcEvent, ProcReceived,
                             ProcRunLocal, ProcStarted, ProcTick, Report, SaveSlice, Send, SendTo, WriteCheckpoint,
                             WriteMarker)
from .messages import Msg, proc_addr
from .runtime_errors import EXIT_OK, EXIT_PEER

PROCESS_KINDS = frozenset({"HEARTBEAT", "ABORT", "PROC_DONE", "CKPT_WRITTEN", "CKPT_COMMIT", "EXIT", "EXIT_ACK"})
ENTITY_MESSAGE = "ENTITY_MESSAGE"  # the key of a received message for a worker or server


@dataclass(frozen=True)
class ProcessConfig:
    """What a process knows before it starts. `peers` describes each process for messages ("host:port")."""

    proc: int
    nprocs: int
    peers: dict[int, str] = field(default_factory=dict)
    heartbeat_s: float = 1.0
    peer_timeout_s: float = 30.0
    startup_timeout_s: float = 120.0
    exit_ack_timeout_s: float = 5.0
    resume: bool = False
    resumable_steps: tuple[int, ...] | None = None  # None: this process puts no constraint on the step
    checkpoint_procs: frozenset[int] = frozenset()  # processes hosting server-group-0 servers

    def describe(self, k: int) -> str:
        where = self.peers.get(k)
        return f"process {k} ({where})" if where else f"process {k}"


Entities = tuple[list, list]  # (workers, servers)


class ProcessMachine:
    """The process `cfg.proc`; `make_entities(start_step)` builds its workers and servers."""

    def __init__(self, cfg: ProcessConfig, owner: dict[str, int],
                 make_entities: Callable[[int], Entities]) -> None:
        self.cfg = cfg
        self.owner = owner
        self.make_entities = make_entities
        self.others = [k for k in range(cfg.nprocs) if k != cfg.proc]
        self.state = "new"
        self.entities: dict[str, object] = {}
        self.unfinished: set[str] = set()
        self.local: deque[Msg] = deque()
        self.held: list[Msg] = []
        self.peer_info: dict[int, dict] = {}
        self.last_seen: dict[int, float] = {}
        self.started_at = self.last_heartbeat = self.now = 0.0
        self.exit_deadline = 0.0
        self.start_step = 0
        self.slices: dict[int, dict[str, SaveSlice]] = {}
        self.writes_in_flight = 0
        self.reports: dict[int, dict[int, bool]] = {}
        self.procs_done: set[int] = set()
        self.acks: set[int] = set()
        self.local_servers0: set[str] = set()
        self.story = Story()

    @property
    def has_local_work(self) -> bool:
        return bool(self.local)

    def handle(self, event: ProcEvent) -> list:
        """Apply `event`; the instructions for the shell. Raises InvalidTransition."""
        if event.now is not None:
            self.now = event.now
        key = _key_of(event)
        prev = self.state
        transition = PROCESS_TABLE.row(prev, key, self.story, f"process {self.cfg.proc}", _shown(event))
        out = transition(self, event)
        if key not in _UNTOLD:
            self.story.add(f"{prev} <- {_shown(event)}" + (f" -> {self.state}" if self.state != prev else ""))
        return out

    # ---- startup

    def _on_started(self, event: ProcStarted) -> list:
        self.state = "waiting"
        self.started_at = self.last_heartbeat = self.now
        out = self._heartbeats()
        if not self.others:
            out += self._rendezvous()
        return out

    def _heartbeats(self) -> list:
        self.last_heartbeat = self.now
        meta = {"resume": self.cfg.resume, "ckpts": None if self.cfg.resumable_steps is None
                else list(self.cfg.resumable_steps)}
        return [self._to(k, "HEARTBEAT", meta=meta) for k in self.others]

    def _rendezvous(self) -> list:
        out: list = []
        self.start_step = self._decide_start(out)
        workers, servers = self.make_entities(self.start_step)
        self.state = "running"
        for k in self.others:
            self.last_seen[k] = self.now
        for entity in list(servers) + list(workers):
            self.entities[entity.addr] = entity
            self.unfinished.add(entity.addr)
            if entity.addr.startswith("s0."):
                self.local_servers0.add(entity.addr)
        for entity in list(servers) + list(workers):
            out += self._route(entity.handle(Begin()))
        self.local.extend(self.held)
        self.held = []
        out.append(Log(f"all {self.cfg.nprocs} processes up after {self.now - self.started_at:.1f}s; "
                       f"training from step {self.start_step}"))
        return out + self._maybe_done()

    def _decide_start(self, out: list) -> int:
        infos = [{"resume": self.cfg.resume, "ckpts": None if self.cfg.resumable_steps is None
                  else list(self.cfg.resumable_steps)}] + [self.peer_info[k] for k in self.others]
        if not any(i.get("resume") for i in infos):
            return 0
        sets = [set(i["ckpts"]) for i in infos if i.get("ckpts") is not None]
        common = set.intersection(*sets) if sets else set()
        if not common:
            out.append(Log("resume: no checkpoint step is complete for every process; starting from step 0"))
            return 0
        return max(common)

    # ---- time

    def _on_tick(self, event: ProcTick) -> list:
        out: list = []
        if self.now - self.last_heartbeat >= self.cfg.heartbeat_s and self.state in ("waiting", "running", "done"):
            out += self._heartbeats()
        if self.state == "waiting" and self.now - self.started_at > self.cfg.startup_timeout_s:
            missing = [self.cfg.describe(k) for k in self.others if k not in self.peer_info]
            return out + self._abort(EXIT_PEER, f"peers never appeared within {self.cfg.startup_timeout_s:g}s: "
                                     + ", ".join(missing))
        if self.state in ("running", "done"):
            for k in self.others:
                if self.now - self.last_seen.get(k, self.now) > self.cfg.peer_timeout_s:
                    return out + self._abort(EXIT_PEER, f"lost peer {self.cfg.describe(k)}: no message for "
                                             f"{self.now - self.last_seen[k]:.1f}s "
                                             f"(timeout {self.cfg.peer_timeout_s:g}s)")
        if self.state == "exiting" and self.now >= self.exit_deadline:
            return out + self._exit(EXIT_OK, "")
        return out

    # ---- messages

    def _seen(self, msg: Msg) -> None:
        if msg.proc in self.last_seen or msg.proc in self.others:
            self.last_seen[msg.proc] = self.now

    def _on_entity_message(self, msg: Msg) -> list:
        if self.state == "waiting":
            self.held.append(msg)
        else:
            self.local.append(msg)
        return []

    def _on_heartbeat(self, msg: Msg) -> list:
        if msg.proc not in self.peer_info:
            self.peer_info[msg.proc] = dict(msg.meta)
            if self.state == "waiting" and all(k in self.peer_info for k in self.others):
                return self._rendezvous()
        return []

    def _on_abort(self, msg: Msg) -> list:
        return self._exit(EXIT_PEER, f"{self.cfg.describe(msg.proc)} aborted the job: {msg.meta.get('reason', '?')}")

    def _on_proc_done(self, msg: Msg) -> list:
        self.procs_done.add(msg.proc)
        return self._maybe_exit()

    def _on_ckpt_written(self, msg: Msg) -> list:
        return self._report(msg.step, msg.proc, bool(msg.meta.get("ok")))

    def _on_ckpt_commit(self, msg: Msg) -> list:
        return [WriteMarker(msg.step)]

    def _on_exit(self, msg: Msg) -> list:
        return [self._to(0, "EXIT_ACK")] + self._exit(EXIT_OK, "")

    def _on_exit_ack(self, msg: Msg) -> list:
        self.acks.add(msg.proc)
        if self.state == "exiting" and self.acks >= set(self.others):
            return self._exit(EXIT_OK, "")
        return []

    # ---- local delivery and routing

    def _run_local(self, event: ProcRunLocal) -> list:
        if not self.local:
            return []
        msg = self.local.popleft()
        entity = self.entities.get(msg.dst)
        if entity is None:
            raise KeyError(f"process {self.cfg.proc} got {msg!r} for {msg.dst}, which it does not host")
        return self._route(entity.handle(Deliver(msg)))

    def _route(self, instructions: list) -> list:
        """Carry out the entities' instructions; an unknown one raises UnknownInstruction."""
        out: list = []
        for ins in instructions:
            out += _ENTITY_INSTRUCTIONS(ins, self)
        return out

    def _send(self, ins: Send) -> list:
        k = self.owner[ins.msg.dst]
        if k == self.cfg.proc:
            self.local.append(ins.msg)
            return []
        ins.msg.proc = self.cfg.proc
        return [SendTo(k, ins.msg)]

    def _entity_finished(self, ins: Finished) -> list:
        self.unfinished.discard(ins.who)
        return self._maybe_done()

    # ---- checkpoints

    def _save(self, s: SaveSlice) -> list:
        got = self.slices.setdefault(s.step, {})
        got[s.server] = s
        if set(got) != self.local_servers0:
            return []
        del self.slices[s.step]
        self.writes_in_flight += 1
        return [WriteCheckpoint(s.step, tuple(got[k] for k in sorted(got)))]

    def _on_written(self, event: CheckpointWritten) -> list:
        self.writes_in_flight -= 1
        out: list = [] if event.ok else [Log(f"checkpoint step {event.step} not written: {event.error}")]
        if self.cfg.proc == 0:
            out += self._report(event.step, 0, event.ok)
        else:
            out.append(self._to(0, "CKPT_WRITTEN", step=event.step, meta={"ok": event.ok}))
        return out + self._maybe_done()

    def _report(self, step: int, proc: int, ok: bool) -> list:
        got = self.reports.setdefault(step, {})
        got[proc] = ok
        if not set(got) >= self.cfg.checkpoint_procs:
            return []
        del self.reports[step]
        if not all(got.values()):
            return [Log(f"checkpoint step {step} is incomplete (a process failed to write its slices)")]
        return [WriteMarker(step)] + [self._to(k, "CKPT_COMMIT", step=step) for k in self.others]

    # ---- shutdown

    def _maybe_done(self) -> list:
        if self.state != "running" or self.unfinished or self.writes_in_flight:
            return []
        self.state = "done"
        if self.cfg.proc != 0:
            return [self._to(0, "PROC_DONE")]
        return self._maybe_exit()

    def _maybe_exit(self) -> list:
        if self.cfg.proc != 0 or self.state != "done" or not self.procs_done >= set(self.others):
            return []
        if not self.others:
            return self._exit(EXIT_OK, "")
        self.state = "exiting"
        self.exit_deadline = self.now + self.cfg.exit_ack_timeout_s
        return [self._to(k, "EXIT") for k in self.others]

    def _abort(self, code: int, message: str) -> list:
        return [self._to(k, "ABORT", meta={"reason": message}) for k in self.others] + self._exit(code, message)

    def _exit(self, code: int, message: str) -> list:
        self.state = "exited"
        return [Exit(code, message)]

    def _to(self, k: int, kind: str, step: int = 0, meta: dict | None = None) -> SendTo:
        return SendTo(k, Msg(kind, proc_addr(self.cfg.proc), proc_addr(k), step, None, meta or {}, self.cfg.proc))


def _key_of(event: ProcEvent) -> type | str:
    """An event's key in PROCESS_TABLE: its type, or for a received message its kind."""
    if type(event) is ProcReceived:
        return event.msg.kind if event.msg.kind in PROCESS_KINDS else ENTITY_MESSAGE
    return type(event)


def _shown(event: ProcEvent) -> str:
    return repr(event.msg) if type(event) is ProcReceived else type(event).__name__


def _received(on_message: Callable[[ProcessMachine, Msg], list]) -> Callable[[ProcessMachine, ProcReceived], list]:
    """A transition on a received message: the sender counts as heard from, then `on_message` runs."""
    def transition(machine: ProcessMachine, event: ProcReceived) -> list:
        machine._seen(event.msg)
        return on_message(machine, event.msg)
    return transition


def _changes_nothing(machine: ProcessMachine, event: ProcEvent) -> list:
    return []


_ENTITY_INSTRUCTIONS = InstructionDispatch("the process (its workers' and servers' instructions)", {
    Send: lambda ins, machine: machine._send(ins),
    Report: lambda ins, machine: [ins],
    Finished: lambda ins, machine: machine._entity_finished(ins),
    SaveSlice: lambda ins, machine: machine._save(ins),
})
_MESSAGES = {
    "HEARTBEAT": ProcessMachine._on_heartbeat, "ABORT": ProcessMachine._on_abort,
    "PROC_DONE": ProcessMachine._on_proc_done, "CKPT_WRITTEN": ProcessMachine._on_ckpt_written,
    "CKPT_COMMIT": ProcessMachine._on_ckpt_commit, "EXIT": ProcessMachine._on_exit,
    "EXIT_ACK": ProcessMachine._on_exit_ack, ENTITY_MESSAGE: ProcessMachine._on_entity_message,
}
_AFTER_START: dict[Any, Callable[[ProcessMachine, Any], list]] = {
    ProcTick: ProcessMachine._on_tick, ProcRunLocal: ProcessMachine._run_local,
    CheckpointWritten: ProcessMachine._on_written, **{kind: _received(fn) for kind, fn in _MESSAGES.items()},
}
_PROCESS_EVENTS = (ProcStarted, *_AFTER_START)
_UNTOLD = (ProcTick, ProcRunLocal, ENTITY_MESSAGE)  # too many to tell in the story
# Started once; between the start and the exit every event is taken (a message's handler checks
# what the state allows); after the exit nothing changes.
PROCESS_TABLE: TransitionTable[Callable[[ProcessMachine, Any], list]] = TransitionTable(
    "process", ("new", "waiting", "running", "done", "exiting", "exited"), _PROCESS_EVENTS, {
        ("new", ProcStarted): ProcessMachine._on_started,
        **{(state, key): fn for state in ("waiting", "running", "done", "exiting") for key, fn in _AFTER_START.items()},
        **{("exited", key): _changes_nothing for key in _PROCESS_EVENTS},
    })
