"""A SINGA worker as a state machine: events in, instructions out, no sockets.

Life of worker (g, j), training against server group sg = g / (nworker_groups / nserver_groups):

    new --Begin--> pulling        PULL to every server of sg
    pulling --PARAM x n--> waiting    (all slices in) compute step t, GRAD to every server
    waiting --PARAM x n--> waiting    step t done; display / validate / test when due; compute t+1
    waiting --PARAM x n--> finished   after the last step: DONE to every server
                       \\-> final     worker (0, 0) also sends FINAL_PULL
    final --PARAM x n--> finished     test with the final values, FINAL

A group is synchronous because its servers answer step t only once every
worker of the group has pushed step t's gradient (server.py); the worker
just waits for all slices of step t+1 before computing it. Only worker
(0, 0) tests and validates (SINGA: group 0 does). Each PARAM carries the
number of steps done; a slice for any other step is refused like an
event the table has no row for (InvalidTransition).

Steps are counted as steps done: the PROGRESS line of step 50 follows the
50th update, tests and validations run when due after step s < train_steps
(SINGA's test of the untrained model at step 0 is left out), and the last
test is the one FINAL reports, with every group's training in.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from scylla_singa.common.transition_table import InvalidTransition, Story, TransitionTable
from scylla_singa.contracts import FINAL_PREFIX, PROGRESS_PREFIX
from .data import BatchStream
from .machine_events import ENTITY_EVENT_KEYS, Begin, Deliver, Finished, Report, Send
from .messages import Msg, server_addr, worker_addr
from .net import Model
from .spec import TrainingSpec


class _Window:
    """Training metrics since the last display."""

    def __init__(self, now: float) -> None:
        self.reset(now)

    def reset(self, now: float) -> None:
        self.t0, self.loss, self.acc, self.steps, self.samples = now, 0.0, 0.0, 0, 0
        self.has_acc = False

    def add(self, loss: float | None, acc: float | None, samples: int) -> None:
        self.loss += loss or 0.0
        if acc is not None:
            self.acc += acc
            self.has_acc = True
        self.steps += 1
        self.samples += samples


class WorkerMachine:
    """Worker `index` of group `group`. `clock` gives seconds (monotonic)."""

    def __init__(self, spec: TrainingSpec, group: int, index: int, model: Model, streams: dict[str, BatchStream],
                 start_step: int, clock: Callable[[], float], job_id: str, proc: int, started_at: float) -> None:
        self.spec, self.group, self.index = spec, group, index
        self.addr = worker_addr(group, index)
        sg = spec.server_group_of(group)
        self.servers = [server_addr(sg, s) for s in range(spec.shape.nservers_per_group)]
        self.bounds = dict(zip(self.servers, spec.server_bounds()))
        self.model, self.streams = model, streams
        self.step = start_step
        self.clock, self.job_id, self.proc, self.started_at = clock, job_id, proc, started_at
        self.tester = group == 0 and index == 0
        self.state = "new"
        self.story = Story()
        self._got: set[str] = set()
        self._expect = start_step  # the step every PARAM of the current round must carry
        self._window = _Window(clock())

    # ---- the one entry point

    def handle(self, event: Begin | Deliver) -> list:
        """Apply `event`; the instructions. Raises InvalidTransition."""
        transition = WORKER_TABLE.row(self.state, event.key, self.story, self.addr, str(event))
        self.story.add(f"{self.state} <- {event}")
        return transition(self, event)

    # ---- transitions

    def _on_start(self, event: Begin) -> list:
        self.state = "pulling"
        self._got.clear()
        return [Send(Msg("PULL", self.addr, s, self.step)) for s in self.servers]

    def _on_first_params(self, event: Deliver) -> list:
        if not self._store(event.msg):
            return []
        self._window.reset(self.clock())
        return self._compute_or_finish()

    def _on_update(self, event: Deliver) -> list:
        if not self._store(event.msg):
            return []
        out: list = []
        self.step += 1
        if self.spec.display.due(self.step):
            out.append(self._display())
        if self.tester and self.step < self.spec.train_steps:
            if self.spec.validate.due(self.step) and "validate" in self.model.nets:
                out.append(self._evaluate("validate", self.spec.validate_steps))
            if self.spec.test.due(self.step) and "test" in self.model.nets:
                out.append(self._evaluate("test", self.spec.test_steps))
        return out + self._compute_or_finish()

    def _on_final_params(self, event: Deliver) -> list:
        if not self._store(event.msg):
            return []
        self.state = "finished"
        final = {"job": self.job_id, "steps": self.step, "test_loss": None, "test_accuracy": None}
        out: list = []
        if "test" in self.model.nets:
            report = self._evaluate("test", self.spec.test_steps)
            out.append(report)
            final.update(test_loss=report.payload["loss"], test_accuracy=report.payload["accuracy"])
        final["wall_s"] = round(self.clock() - self.started_at, 3)
        return out + [Report(FINAL_PREFIX, final), Finished(self.addr)]

    # ---- helpers

    def _store(self, msg: Msg) -> bool:
        """Copy a PARAM slice in; True once every server's slice for this step has arrived."""
        lo, hi = self.bounds.get(msg.src, (None, None))
        if msg.step != self._expect or lo is None or (msg.meta.get("lo"), msg.meta.get("hi")) != (lo, hi) \
                or msg.src in self._got or msg.data is None or msg.data.size != hi - lo:
            raise InvalidTransition(self.addr, self.state, f"unexpected {msg!r} (expected step {self._expect}, "
                                    f"slices from {sorted(set(self.servers) - self._got)})", self.story)
        self.model.values[lo:hi] = msg.data
        self._got.add(msg.src)
        return len(self._got) == len(self.servers)

    def _compute_or_finish(self) -> list:
        self._got.clear()
        if self.step >= self.spec.train_steps:
            return self._finish()
        net = self.model.nets["train"]
        features, labels = self.streams["train"].next()
        net.input.feed(features, labels)
        self.model.grads.fill(0)
        metrics = net.forward(train=True)
        net.backward()
        self._window.add(metrics.loss, metrics.accuracy, metrics.samples)
        n = metrics.samples
        self.state = "waiting"
        self._expect = self.step + 1
        return [Send(Msg("GRAD", self.addr, s, self.step, self.model.grads[lo:hi] * np.float32(n), {"n": n}))
                for s, (lo, hi) in self.bounds.items()]

    def _finish(self) -> list:
        out: list = [Send(Msg("DONE", self.addr, s, self.step)) for s in self.servers]
        if self.tester:
            self.state = "final"
            return out + [Send(Msg("FINAL_PULL", self.addr, s, self.step)) for s in self.servers]
        self.state = "finished"
        return out + [Finished(self.addr)]

    def _payload(self, phase: str, loss, acc, samples_per_s: float) -> dict:
        return {"job": self.job_id, "proc": self.proc, "group": self.group, "worker": self.index,
                "step": self.step, "loss": None if loss is None else round(float(loss), 6),
                "accuracy": None if acc is None else round(float(acc), 6),
                "samples_per_s": round(samples_per_s, 1), "phase": phase}

    def _display(self) -> Report:
        w, now = self._window, self.clock()
        steps = max(w.steps, 1)
        rate = w.samples / max(now - w.t0, 1e-9)
        report = Report(PROGRESS_PREFIX, self._payload("train", w.loss / steps,
                                                       w.acc / steps if w.has_acc else None, rate))
        w.reset(now)
        return report

    def _evaluate(self, phase: str, steps: int) -> Report:
        """Run `steps` batches (a whole pass when 0) of the phase's net with the current values."""
        net, stream = self.model.nets[phase], self.streams[phase]
        stream.reset()
        if steps <= 0:
            steps = math.ceil(len(stream.indices) / stream.batch)
        t0 = self.clock()
        loss = acc = 0.0
        n = 0
        has_loss = has_acc = False
        for _ in range(steps):
            features, labels = stream.next()
            net.input.feed(features, labels)
            m = net.forward(train=False)
            if m.loss is not None:
                loss += m.loss * m.samples
                has_loss = True
            if m.accuracy is not None:
                acc += m.accuracy * m.samples
                has_acc = True
            n += m.samples
        rate = n / max(self.clock() - t0, 1e-9)
        return Report(PROGRESS_PREFIX, self._payload(phase, loss / n if has_loss else None,
                                                     acc / n if has_acc else None, rate))


# (state, event key) -> transition. A worker takes only its servers' values; anything else is refused.
WORKER_TABLE: TransitionTable[Callable[[WorkerMachine, Begin | Deliver], list]] = TransitionTable(
    "worker", ("new", "pulling", "waiting", "final", "finished"), ENTITY_EVENT_KEYS, {
        ("new", "BEGIN"): WorkerMachine._on_start,
        ("pulling", "PARAM"): WorkerMachine._on_first_params,
        ("waiting", "PARAM"): WorkerMachine._on_update,
        ("final", "PARAM"): WorkerMachine._on_final_params,
    })
