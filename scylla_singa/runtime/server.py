"""A SINGA server as a state machine: it owns one slice of the parameters and applies the updater.

Server (sg, s) owns flat range bounds[s] of the parameter vector and serves
the worker groups g with g / (nworker_groups / nserver_groups) == sg.

Synchronous within a worker group: the server adds up the gradients of
step t from every worker of group g (each sent n_j * gradient over its n_j
samples), and only when all have arrived applies one update with the
group's average gradient at learning-rate step t, then answers each worker
of g with the new slice (PARAM, step t+1). Asynchronous across groups: each
group's steps are aggregated and applied on their own, as they come.

Server groups (Distributed Hogwild): group 0 holds the master copy. A server
of group sg > 0 first fetches the master values (SYNC init), and every
`sync_freq` of its own updates sends the change since its last sync (SYNC);
the master adds it and replies with its values, which the server adopts plus
whatever it updated meanwhile. One sync is in flight at a time, and a server
waiting for its reply applies at most `sync_freq` more updates before it
holds the next ones (bounded staleness): when the master's process stalls
(a slow checkpoint write, a busy host), the other groups would otherwise
train on alone from a stale copy, and the master, which adds up every
group's change, would receive several whole trajectories at once and
overshoot.

Shutdown: once every worker it serves has sent DONE, a server of group > 0
makes a final sync and is finished; the master is finished once its own
workers are done and every other group's final sync is in. FINAL_PULL (from
worker (0, 0)) is answered only then, so the final test sees every group's
training. Servers of group 0 emit SaveSlice when worker group 0 completes a
checkpoint step.

States: new -> serving (group 0) | init (others, until the master copy
arrives; requests meanwhile are held) -> serving -> draining -> finished.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np

from scylla_singa.common.transition_table import InvalidTransition, Story, TransitionTable
from .machine_events import ENTITY_EVENT_KEYS, Begin, Deliver, Finished, SaveSlice, Send
from .messages import Msg, parse_addr, server_addr, worker_addr
from .spec import TrainingSpec
from .updaters import State, init_state, update


class ServerMachine:
    """Server `index` of group `group`; `values`/`state` are its initial slice (None for groups > 0)."""

    def __init__(self, spec: TrainingSpec, group: int, index: int, start_step: int,
                 values: np.ndarray | None = None, state: State | None = None) -> None:
        self.spec, self.group, self.index = spec, group, index
        self.addr = server_addr(group, index)
        self.lo, self.hi = spec.server_bounds()[index]
        lr_scale, wd_scale = spec.layout.scales()
        self.lr_scale = _scalar_if_uniform(lr_scale[self.lo:self.hi])
        self.wd_scale = _scalar_if_uniform(wd_scale[self.lo:self.hi])
        self.groups = spec.worker_groups_of(group)
        npg = spec.shape.nworkers_per_group
        self.workers = {g: [worker_addr(g, j) for j in range(npg)] for g in self.groups}
        self.nworkers = len(self.groups) * npg
        self.group_step = {g: start_step for g in self.groups}
        self.start_step = start_step
        self.is_master = group == 0
        self.master = server_addr(0, index)
        self.syncing = spec.shape.nserver_groups > 1
        self.values = values
        self.ustate = state if state is not None else init_state(spec.updater, self.hi - self.lo)
        self.pending: dict[int, list] = {}
        self.done: set[str] = set()
        self.updates = 0
        self.finals_in = 0
        self.sync_in_flight = False
        self.updates_at_sync = 0
        self.deferred: deque[tuple[int, np.ndarray]] = deque()  # (group, gradient) held while too far ahead
        self.final_sync_sent = False
        self.snapshot: np.ndarray | None = None
        self.last_synced = values
        self.held: list[Msg] = []
        self.final_pullers: list[str] = []
        self.state = "new"
        self.story = Story()
        self.table = MASTER_SERVER_TABLE if self.is_master else GROUP_SERVER_TABLE

    def handle(self, event: Begin | Deliver) -> list:
        """Apply `event`; the instructions. Raises InvalidTransition."""
        transition = self.table.row(self.state, event.key, self.story, self.addr, str(event))
        self.story.add(f"{self.state} <- {event}")
        return transition(self, event)

    # ---- transitions

    def _on_start(self, event) -> list:
        if self.is_master or not self.syncing:
            if self.values is None:
                raise ValueError(f"{self.addr} has no initial values")
            self.state = "serving"
            return []
        self.state = "init"
        return [Send(Msg("SYNC", self.addr, self.master, 0, None, {"init": True}))]

    def _on_master_copy(self, event: Deliver) -> list:
        self.values = event.msg.data.copy()
        self.last_synced = self.values
        self.state = "serving"
        out: list = []
        held, self.held = self.held, []
        for msg in held:
            out += self.handle(Deliver(msg))
        return out

    def _hold(self, event: Deliver) -> list:
        self.held.append(event.msg)
        return []

    def _on_pull(self, event: Deliver) -> list:
        g = self._group_of(event.msg)
        return [self._param(event.msg.src, self.group_step[g])]

    def _on_grad(self, event: Deliver) -> list:
        msg = event.msg
        g = self._group_of(msg)
        if msg.step != self.group_step[g] or msg.data is None or msg.data.size != self.hi - self.lo:
            raise InvalidTransition(self.addr, self.state, f"unexpected {msg!r} (group {g} is at step "
                                    f"{self.group_step[g]})", self.story)
        acc = self.pending.setdefault(g, [np.zeros(self.hi - self.lo, dtype=np.float32), 0, set()])
        if msg.src in acc[2]:
            raise InvalidTransition(self.addr, self.state, f"second gradient of step {msg.step} from {msg.src}",
                                    self.story)
        acc[0] = acc[0] + msg.data
        acc[1] += int(msg.meta.get("n", 1))
        acc[2].add(msg.src)
        if len(acc[2]) < len(self.workers[g]):
            return []
        del self.pending[g]
        grad = acc[0] / np.float32(max(acc[1], 1))
        if self._too_far_ahead():
            self.deferred.append((g, grad))
            return []
        return self._apply(g, grad)

    def _too_far_ahead(self) -> bool:
        """A sync is in flight and `sync_freq` updates have been applied since it was sent."""
        return (self.sync_in_flight and not self.is_master
                and self.updates - self.updates_at_sync >= self.spec.shape.sync_freq)

    def _apply(self, g: int, grad: np.ndarray) -> list:
        step = self.group_step[g]
        lr = self.spec.lr(step) * self.lr_scale
        self.values, self.ustate = update(self.spec.updater, self.values, grad, self.ustate, step, lr, self.wd_scale)
        self.values = self.values.astype(np.float32, copy=False)
        self.group_step[g] = step + 1
        self.updates += 1
        out: list = []
        if self.is_master and g == 0 and step + 1 > self.start_step and self.spec.checkpoint_due(step + 1):
            out.append(SaveSlice(step + 1, self.addr, self.lo, self.hi, self.values, dict(self.ustate)))
        out += [self._param(w, step + 1) for w in self.workers[g]]
        if (self.syncing and not self.is_master and not self.sync_in_flight
                and self.updates % self.spec.shape.sync_freq == 0):
            out.append(self._sync(final=False))
        return out

    def _on_done(self, event: Deliver) -> list:
        self.done.add(event.msg.src)
        if len(self.done) < self.nworkers:
            return []
        self.state = "draining"
        return self._maybe_finish()

    def _on_final_pull(self, event: Deliver) -> list:
        if self.state == "finished":
            return [self._param(event.msg.src, self.group_step[self._group_of(event.msg)])]
        self.final_pullers.append(event.msg.src)
        return []

    def _on_sync(self, event: Deliver) -> list:
        msg = event.msg
        if not msg.meta.get("init"):
            self.values = (self.values + msg.data).astype(np.float32, copy=False)
        out = [Send(Msg("SYNC_REPLY", self.addr, msg.src, msg.step, self.values))]
        if msg.meta.get("final"):
            self.finals_in += 1
            out += self._maybe_finish()
        return out

    def _on_sync_reply(self, event: Deliver) -> list:
        master = event.msg.data
        self.values = (master + (self.values - self.snapshot)).astype(np.float32, copy=False)
        self.last_synced = master
        self.sync_in_flight = False
        out: list = []
        while self.deferred and not self._too_far_ahead():
            out += self._apply(*self.deferred.popleft())
        return out + self._maybe_finish()

    # ---- helpers

    def _maybe_finish(self) -> list:
        if self.state != "draining":
            return []
        if self.is_master or not self.syncing:
            if self.syncing and self.finals_in < self.spec.shape.nserver_groups - 1:
                return []
            return self._finished()
        if not self.final_sync_sent:
            if self.sync_in_flight:
                return []
            self.final_sync_sent = True
            return [self._sync(final=True)]
        return [] if self.sync_in_flight else self._finished()

    def _finished(self) -> list:
        self.state = "finished"
        out = [self._param(w, self.group_step[parse_addr(w)[1]]) for w in self.final_pullers]
        self.final_pullers = []
        return out + [Finished(self.addr)]

    def _sync(self, final: bool) -> Send:
        delta = self.values - self.last_synced
        self.snapshot = self.values
        self.sync_in_flight = True
        self.updates_at_sync = self.updates
        meta = {"final": True} if final else {}
        return Send(Msg("SYNC", self.addr, self.master, self.updates, delta, meta))

    def _param(self, worker: str, step: int) -> Send:
        return Send(Msg("PARAM", self.addr, worker, step, self.values, {"lo": self.lo, "hi": self.hi}))

    def _group_of(self, msg: Msg) -> int:
        kind, g, _ = parse_addr(msg.src)
        if kind != "w" or g not in self.group_step:
            raise InvalidTransition(self.addr, self.state, f"{msg!r} from a worker this server does not serve",
                                    self.story)
        return g


Transition = Callable[[ServerMachine, Begin | Deliver], list]
_SERVER_STATES = ("new", "init", "serving", "draining", "finished")
# (state, event key) -> transition, for every server; requests that come while a server of a group
# > 0 waits for the master copy are held.
_EVERY_SERVER: dict[tuple[str, str], Transition] = {
    ("new", "BEGIN"): ServerMachine._on_start,
    ("init", "PULL"): ServerMachine._hold, ("init", "GRAD"): ServerMachine._hold,
    ("init", "DONE"): ServerMachine._hold, ("init", "FINAL_PULL"): ServerMachine._hold,
    ("serving", "PULL"): ServerMachine._on_pull,
    ("serving", "GRAD"): ServerMachine._on_grad,
    ("serving", "DONE"): ServerMachine._on_done,
    ("serving", "FINAL_PULL"): ServerMachine._on_final_pull,
    ("draining", "FINAL_PULL"): ServerMachine._on_final_pull,
    ("finished", "FINAL_PULL"): ServerMachine._on_final_pull,
}
# Group 0 holds the master copy: other groups' servers SYNC with it.
MASTER_SERVER_TABLE: TransitionTable[Transition] = TransitionTable(
    "server of group 0", _SERVER_STATES, ENTITY_EVENT_KEYS, {
        **_EVERY_SERVER,
        ("serving", "SYNC"): ServerMachine._on_sync, ("draining", "SYNC"): ServerMachine._on_sync,
    })
# A server of a group > 0 gets the master copy first (init), then the master's SYNC_REPLYs.
GROUP_SERVER_TABLE: TransitionTable[Transition] = TransitionTable(
    "server of a group > 0", _SERVER_STATES, ENTITY_EVENT_KEYS, {
        **_EVERY_SERVER,
        ("init", "SYNC_REPLY"): ServerMachine._on_master_copy,
        ("serving", "SYNC_REPLY"): ServerMachine._on_sync_reply,
        ("draining", "SYNC_REPLY"): ServerMachine._on_sync_reply,
    })


def _scalar_if_uniform(v: np.ndarray):
    return float(v[0]) if v.size and np.all(v == v[0]) else v
