"""A whole SINGA job in one Python process: every ProcessMachine wired by in-memory channels.

Channels keep ZeroMQ's guarantee (FIFO per sender -> receiver pair) and
nothing else: which channel delivers next, and when a process runs one
local message, is chosen by a seeded random generator. Messages cross the
channels encoded and decoded, as on the wire. Time is fake: every event
advances it a little, and idle periods jump to the next tick, so heartbeats
and timeouts run in milliseconds of real time. Processes can be killed
(they stop, their channels drop) or never started.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable
from pathlib import Path

from scylla_singa.runtime.machine_events import (CheckpointWritten, Exit, Log, ProcReceived, ProcRunLocal,
                                                 ProcStarted, ProcTick, Report, SendTo, WriteCheckpoint,
                                                 WriteMarker)
from scylla_singa.runtime.main import entity_factory, owner_map, parse_args, prepare, write_checkpoint, write_marker
from scylla_singa.runtime.messages import decode, encode
from scylla_singa.runtime.process import ProcessMachine

TICK = 0.2
EVENT_TIME = 0.0002


class SimCluster:
    def __init__(self, conf: Path, tmp: Path, seed: int = 0, resume: bool = False, peer_timeout: float = 5.0,
                 startup_timeout: float = 10.0, not_started: frozenset[int] = frozenset()) -> None:
        self.rng = random.Random(seed)
        self.now = 0.0
        tmp.mkdir(parents=True, exist_ok=True)
        self.setups = []
        self.machines: list[ProcessMachine] = []
        nprocs = self._nprocs(conf)
        cluster = self._cluster(tmp, nprocs)
        for k in range(nprocs):
            argv = ["-conf", str(conf), "-procs_id", str(k), "-peer_timeout", str(peer_timeout),
                    "-startup_timeout", str(startup_timeout)]
            if nprocs > 1:
                argv += ["-cluster", str(cluster)]
            if resume:
                argv.append("-resume")
            setup = prepare(parse_args(argv))
            self.setups.append(setup)
            self.machines.append(ProcessMachine(setup.config, owner_map(setup.spec),
                                                entity_factory(setup, lambda: self.now, 0.0)))
        self.nprocs = nprocs
        self.channels: dict[tuple[int, int], deque] = {}
        self.alive = set(range(nprocs)) - set(not_started)
        self.started = set(self.alive)
        self.exits: dict[int, Exit] = {}
        self.exit_times: dict[int, float] = {}
        self.reports: dict[int, list[tuple[str, dict]]] = {k: [] for k in range(nprocs)}
        self.logs: dict[int, list[str]] = {k: [] for k in range(nprocs)}
        self.killed_at: float | None = None

    @staticmethod
    def _nprocs(conf: Path) -> int:
        from scylla_singa.runtime.spec import load_spec
        return load_spec(conf).nprocs

    @staticmethod
    def _cluster(tmp: Path, n: int) -> Path:
        path = tmp / "cluster.json"
        path.write_text(json.dumps({"job": "sim", "nprocs": n,
                                    "procs": [{"id": k, "host": f"sim-proc-{k}", "port": 6723} for k in range(n)]}))
        return path

    # ---- driving

    def kill(self, k: int) -> None:
        """Process k stops dead (SIGKILL): no more events, nothing more from or to it."""
        self.alive.discard(k)
        self.killed_at = self.now
        for key in [key for key in self.channels if k in key]:
            self.channels[key].clear()

    def run(self, until: float = 300.0, on_event: Callable[["SimCluster"], None] | None = None) -> dict[int, Exit]:
        for k in sorted(self.alive):
            self._execute(k, self.machines[k].handle(ProcStarted(self.now)))
        next_tick = TICK
        while self.alive and self.now < until:
            choices = [("chan", key) for key, q in self.channels.items() if q and key[1] in self.alive]
            choices += [("local", k) for k in self.alive if self.machines[k].has_local_work]
            if choices:
                kind, what = self.rng.choice(choices)
                self.now += EVENT_TIME
                if kind == "chan":
                    msg = self.channels[what].popleft()
                    self._execute(what[1], self.machines[what[1]].handle(ProcReceived(msg, self.now)))
                else:
                    self._execute(what, self.machines[what].handle(ProcRunLocal(self.now)))
            else:
                self.now = max(self.now, next_tick)
            if self.now >= next_tick:
                next_tick = self.now + TICK
                for k in sorted(self.alive):
                    self._execute(k, self.machines[k].handle(ProcTick(self.now)))
            if on_event is not None:
                on_event(self)
        return self.exits

    def _execute(self, k: int, instructions: list) -> None:
        work = list(instructions)
        while work and k in self.alive:
            ins = work.pop(0)
            if isinstance(ins, SendTo):
                if ins.proc in self.alive or ins.proc not in self.started:
                    self.channels.setdefault((k, ins.proc), deque()).append(decode(encode(ins.msg)))
            elif isinstance(ins, Report):
                self.reports[k].append((ins.kind, ins.payload))
            elif isinstance(ins, WriteCheckpoint):
                setup = self.setups[k]
                done: CheckpointWritten = write_checkpoint(setup.store, k, ins, setup.spec.layout.signature())
                work[:0] = self.machines[k].handle(done)
            elif isinstance(ins, WriteMarker):
                assert not write_marker(self.setups[k].store, ins.step)
            elif isinstance(ins, Log):
                self.logs[k].append(ins.message)
            elif isinstance(ins, Exit):
                self.exits[k] = ins
                self.exit_times[k] = self.now
                self.alive.discard(k)
            else:
                raise TypeError(ins)

    # ---- results

    def final(self) -> dict | None:
        return next((p for kind, p in self.reports[0] if kind == "FINAL"), None)

    def progress(self, k: int, phase: str = "train") -> list[dict]:
        return [p for kind, p in self.reports[k] if kind == "PROGRESS" and p["phase"] == phase]
