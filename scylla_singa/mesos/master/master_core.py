"""The master's core: frameworks, their calls, offers and allocation rounds.

The HTTP layer (`master_http`) parses requests and hands calls here; agents'
messages go to its `agent_registry` (agent_registry.AgentRegistry). Everything runs on one
asyncio loop (timers use it); there is no locking. A call either returns
(the HTTP layer answers 202) or raises `CallError(status, message)` with
Mesos's status code and text. Events go out on the framework's stream.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from scylla_singa.common.transition_table import InstructionDispatch, emitted_types
from scylla_singa.mesos.api.fields import VERSION, ipv4_as_uint32, ipv4_of, value
from scylla_singa.mesos.api.protocol import make_status, update_event
from scylla_singa.mesos.api.reservations import offered_form
from scylla_singa.mesos.api.resources import Resources
from .agent_registry import AgentRegistry
from .allocator import Grant, make_allocator
from .master_store import MasterStore
from .master_records import CallError, FrameworkRec, MasterConfig, OfferRec, Outbox, TaskRec
from .launch_validation import LaunchInvalid, check_launch
from .master_metrics import count_terminal
from .quota import Quota
from .reservation_ops import OperationInvalid, conversion
from .inverse_offers import InverseOffers
from .maintenance import Maintenance
from .operation_feedback import OperationFeedback
from .operator_events import OperatorEvents
from .registration_lifecycles import (FRAMEWORK_TABLE, ActivateFramework, CancelFailoverTimer, CloseFrameworkStream,
                                      DeactivateFramework, FailOverOldStream, FrameworkFailoverExpired,
                                      FrameworkLifecycle, FrameworkStreamClosed, FrameworkSubscribes,
                                      FrameworkTornDown, PersistFramework, RemoveFramework, RescindFrameworkOffers,
                                      SendSubscribed, StartFailoverTimer)

# Every scheduler call type (scheduler.proto's Call.Type but UNKNOWN, which scheduler_http answers with
# 501 itself); the payload each needs is checked earlier, in mesos/api/call_validation.py.
CALLS = frozenset({"SUBSCRIBE", "TEARDOWN", "ACCEPT", "DECLINE", "ACCEPT_INVERSE_OFFERS", "DECLINE_INVERSE_OFFERS",
                   "REVIVE", "KILL", "SHUTDOWN", "ACKNOWLEDGE", "ACKNOWLEDGE_OPERATION_STATUS", "RECONCILE",
                   "RECONCILE_OPERATIONS", "MESSAGE", "REQUEST", "SUPPRESS", "UPDATE_FRAMEWORK"})


# ACCEPT operations that change what an agent's resources are (reservations, persistent volumes).
CONVERSIONS = frozenset({"RESERVE", "UNRESERVE", "CREATE", "DESTROY", "GROW_VOLUME", "SHRINK_VOLUME"})
DEFAULT_REFUSE_S = 5.0
# The least time between the starts of two allocation rounds that changes ask for (schedule_allocation).
ALLOCATION_SPACING_S = 0.005
log = logging.getLogger(__name__)


class Master:
    """Mesos master state and behaviour; see the module docstring for the threading model."""

    def __init__(self, config: MasterConfig) -> None:
        self.cfg = config
        self.id = str(uuid.uuid4())
        self.start_time = time.time()
        self.allocator = make_allocator(config.allocator)
        for role, weight in config.role_weights.items():
            self.allocator.set_role_weight(role, weight)
        self.frameworks: dict[str, FrameworkRec] = {}
        self.completed_frameworks: list[FrameworkRec] = []
        self.removed_framework_ids: set[str] = set()   # torn down or timed out: never subscribed again
        self.offers: dict[str, OfferRec] = {}
        self.store = MasterStore(config.work_dir)
        # What operators set, as the store kept it (a restart keeps it, as Mesos's registry does).
        self.quotas: dict[str, Quota] = dict(self.store.quotas)   # roles with a guarantee or a limit (quota_calls)
        self.maintenance: Maintenance = self.store.maintenance    # the operator's schedule (maintenance_calls)
        for role, weight in self.store.weights.items():   # UPDATE_WEIGHTS's, over the --weights flag's
            config.role_weights[role] = weight
            self.allocator.set_role_weight(role, weight)
        for role, quota in self.quotas.items():
            self.allocator.set_quota(role, quota)
        self.inverse_offers = InverseOffers(self)
        self.operation_feedback = OperationFeedback(self)
        self.counters: dict[str, float] = {}
        self.last_allocation_s = 0.0
        self.allocation_runs = 0
        self.allocation_ms: deque[float] = deque(maxlen=1000)   # the recent rounds' durations (metrics)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ids = itertools.count(1)
        self._alloc_pending: asyncio.Handle | None = None   # the round scheduled by schedule_allocation
        self._last_round_at = float("-inf")                  # loop time the last round started
        self._persist_pending = False
        # The pending handle of each repeating timer, by name: each tick replaces its own entry.
        self._periodic: dict[str, asyncio.TimerHandle] = {}
        self.leader_address: str | None = None  # None: this master leads
        self.stopping = False
        # After election: until this time (loop clock), agents of a former leader may still come back.
        self.recovery_deadline: float | None = None
        self.parked_reconciliations: dict[str, list[tuple[str, str]]] = {}  # agent id -> [(framework, task)]
        self.agent_registry = AgentRegistry(self)
        self.operator_events = OperatorEvents(self)
        self.elected_time: float | None = None
        self._framework_do = InstructionDispatch("the master's framework shell", {
            PersistFramework: self._persist_framework, SendSubscribed: self._send_subscribed,
            FailOverOldStream: self._fail_over_old_stream, ActivateFramework: self._activate_framework,
            CancelFailoverTimer: self._cancel_failover_timer, DeactivateFramework: self._deactivate_framework,
            RescindFrameworkOffers: self._rescind_framework_offers, StartFailoverTimer: self._start_failover_timer,
            CloseFrameworkStream: self._close_framework_stream, RemoveFramework: self._remove_framework,
        }).require(emitted_types(FRAMEWORK_TABLE))
        self._calls: dict[str, Callable[[FrameworkRec, dict], None]] = {
            "TEARDOWN": self._call_teardown, "REVIVE": self._call_revive, "SUPPRESS": self._call_suppress,
            "DECLINE": self._call_decline, "ACCEPT": self._call_accept, "KILL": self._call_kill,
            "ACKNOWLEDGE": self._call_acknowledge, "RECONCILE": self._call_reconcile,
            "MESSAGE": self._call_message, "SHUTDOWN": self._call_shutdown, "REQUEST": self._call_request,
            "RECONCILE_OPERATIONS": self.operation_feedback.reconcile, "UPDATE_FRAMEWORK": self._call_update_framework,
            "ACKNOWLEDGE_OPERATION_STATUS": self.operation_feedback.acknowledge,
            "ACCEPT_INVERSE_OFFERS": lambda fw, body: self.inverse_offers.answer(fw, body, "ACCEPT"),
            "DECLINE_INVERSE_OFFERS": lambda fw, body: self.inverse_offers.answer(fw, body, "DECLINE")}
        if set(self._calls) != CALLS - {"SUBSCRIBE"}:
            raise RuntimeError(f"calls without a handler: {sorted(CALLS - {'SUBSCRIBE'} - set(self._calls))}; "
                               f"handlers of no call: {sorted(set(self._calls) - CALLS)}")

    # ---- lifecycle of the master itself --------------------------------
    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Begin timers (allocation, heartbeats, pings) and recover persisted frameworks."""
        self.loop = loop
        for fw_id, rec in self.store.frameworks.items():
            self.recover_framework(fw_id, rec.get("info") or {}, float(rec.get("failover_timeout", 0)))
        self._every(self.cfg.allocation_interval, self._allocate)
        self._every(self.cfg.heartbeat_interval, self._heartbeat)
        self._every(self.cfg.agent_ping_interval, self.agent_registry.ping_agents)
        self._every(1.0, self.operation_feedback.resend_unacknowledged)

    def stop(self) -> None:
        """Stop timers, close streams and links, flush the store. Idempotent."""
        self.stopping = True
        for h in self._periodic.values():
            h.cancel()
        self._periodic.clear()
        if self._alloc_pending is not None:
            self._alloc_pending.cancel()
            self._alloc_pending = None
        for fw in self.frameworks.values():
            if fw.stream:
                fw.stream.close()
        self.agent_registry.close_links()
        self.operator_events.close()
        self.store.flush()

    def save_operator_settings(self) -> None:
        """Write what operators set (weights given by UPDATE_WEIGHTS, quotas, maintenance) at once."""
        self.store.put_operator_settings(self.store.weights, self.quotas, self.maintenance)

    def became_leader(self) -> None:
        """This master leads from now on; its soft state comes from agents re-registering.

        For `agent_reregister_timeout` an explicit reconciliation of a task this
        master does not know, on an agent that has not registered with it yet,
        is answered once that agent registers (or when the time is up) instead
        of with TASK_LOST at once: Mesos does the same for the agents it
        recovered from its registry, so frameworks that re-subscribe to a new
        leader before the agents do not take running tasks for lost.
        """
        self.elected_time = time.time()
        self.recovery_deadline = self.now() + self.cfg.agent_reregister_timeout
        if self.loop is not None:
            self._periodic["end_recovery"] = self.loop.call_later(self.cfg.agent_reregister_timeout,
                                                                  self._end_recovery)
        self.schedule_allocation()

    def _end_recovery(self) -> None:
        self.recovery_deadline = None
        for agent_id in list(self.parked_reconciliations):
            self.answer_parked(agent_id)

    def awaiting_agent(self, agent_id: str | None) -> bool:
        """Whether `agent_id` may still re-register (an agent of a former leader, during recovery)."""
        return bool(agent_id) and self.recovery_deadline is not None and self.now() < self.recovery_deadline \
            and agent_id not in self.agent_registry.agents and agent_id not in self.agent_registry.removed_agents

    def answer_parked(self, agent_id: str) -> None:
        """Answer the reconciliations that waited for `agent_id` (it registered, or recovery ended)."""
        for fw_id, task_id in self.parked_reconciliations.pop(agent_id, []):
            fw = self.frameworks.get(fw_id)
            if fw is not None:
                self._reconcile_one(fw, task_id)

    def _every(self, interval: float, fn) -> None:
        name = fn.__name__

        def tick() -> None:
            try:
                fn()
            finally:
                if not self.stopping:
                    self._periodic[name] = self.loop.call_later(interval, tick)
        self._periodic[name] = self.loop.call_later(interval, tick)

    def now(self) -> float:
        return self.loop.time() if self.loop else time.monotonic()

    def next_id(self, kind: str) -> str:
        return f"{self.id}-{kind}{next(self._ids):04d}"

    def count(self, key: str, n: float = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    # ---- calls --------------------------------------------------------
    def check_call(self, call: dict[str, Any], stream_id: str | None,
                   principal: str | None = None) -> FrameworkRec:
        """The framework a non-SUBSCRIBE call is for, checked as Mesos does; raises CallError.

        The call itself was validated already (mesos/api/call_validation.py);
        these are the checks that need the master's state: 400 unknown
        framework, 400 another principal, 403 not subscribed, 400 not its stream.
        """
        fw_id = value(call.get("framework_id")) or ""
        fw = self.frameworks.get(fw_id)
        if fw is None:
            raise CallError(400, "Framework cannot be found")
        if principal is not None and fw.principal is not None and principal != fw.principal:
            raise CallError(400, f"Authenticated principal '{principal}' does not match principal "
                                 f"'{fw.principal}' set in `FrameworkInfo`")
        if not fw.connected:
            raise CallError(403, "Framework is not subscribed")
        if fw.stream_id != stream_id:
            raise CallError(400, f"The stream ID '{stream_id or ''}' included in this request didn't match the "
                                 f"stream ID currently associated with framework ID {fw_id}")
        return fw

    def handle_call(self, fw: FrameworkRec, call: dict[str, Any]) -> None:
        """Apply a checked non-SUBSCRIBE call (see check_call). KeyError for a call the validation lets
        through and no handler takes (a bug: every call in CALLS has one, checked at construction)."""
        kind = call["type"]
        self._calls[kind](fw, call.get(kind.lower()) or {})

    def _authorize_users(self, fw: FrameworkRec, tasks: list[dict[str, Any]]) -> None:
        """ACL run_tasks: may this framework's principal run these tasks as their users? Raises LaunchInvalid."""
        acls = self.cfg.acls
        if acls is None:
            return
        for task in tasks:
            user = _task_user(fw, task)
            if not acls.may_run_as(fw.principal, user):
                raise LaunchInvalid(f"Principal '{fw.principal}' is not authorized to launch tasks as user "
                                    f"'{user}' (ACL run_tasks)")

    # ---- SUBSCRIBE ----------------------------------------------------
    def check_subscribe(self, call: dict[str, Any], principal: str | None,
                        source: str | None = None) -> dict[str, Any]:
        """The FrameworkInfo of a validated SUBSCRIBE (call_validation checked its fields), after the checks
        that need the master's state. Raises CallError.

        A framework's principal is fixed at its first registration: framework
        ids are public (/master/state), so a SUBSCRIBE with another
        framework's id from another principal would otherwise fail the victim
        over and hand its tasks to the caller. Mesos refuses it the same way.
        A new registration beyond max_frameworks_per_principal live ones of
        its registrant (`registrant_of(principal, source)`) is refused with 429.
        """
        info = call["subscribe"]["framework_info"]
        fw_id = value(call.get("framework_id")) or value(info.get("id"))
        fw = self.frameworks.get(fw_id) if fw_id else None
        if fw is not None and fw.principal is not None and principal != fw.principal:
            caller = f"principal '{principal}'" if principal is not None else "an unauthenticated caller"
            raise CallError(400, f"Framework {fw_id} was registered by principal '{fw.principal}'; "
                                 f"{caller} cannot subscribe as it")
        self._check_register_acl(principal, info)
        if fw is None:
            registrant = registrant_of(principal, source)
            live = sum(1 for f in self.frameworks.values() if f.registrant == registrant)
            cap = self.cfg.max_frameworks_per_principal
            if live >= cap:
                raise CallError(429, f"Too many frameworks: {registrant} has {live} registered, the most this "
                                     f"master allows (max_frameworks_per_principal={cap}); tear one down "
                                     "(TEARDOWN) or re-subscribe with its framework id")
        if principal is not None and not info.get("principal"):
            info = {**info, "principal": principal}   # kept (and persisted) as Mesos keeps it
        return info

    def _check_register_acl(self, principal: str | None, info: dict[str, Any]) -> None:
        """ACL register_frameworks: may `principal` hold a framework in each of the FrameworkInfo's roles?"""
        acls = self.cfg.acls
        if acls is not None:
            for role in _roles(info):
                if not acls.may_register_framework(principal, role):
                    raise CallError(403, f"Principal '{principal}' is not authorized to register frameworks "
                                         f"in role '{role}' (ACL register_frameworks)")

    def subscribe(self, call: dict[str, Any], info: dict[str, Any], stream: Outbox, principal: str | None,
                  stream_id: str, source: str | None = None) -> str:
        """Register or fail over a framework on `stream` (already validated by check_subscribe); its id."""
        fw_id = value(call.get("framework_id")) or value(info.get("id")) or self.next_id("")
        info = {**info, "id": {"value": fw_id}}
        fw = self.frameworks.get(fw_id)
        added = fw is None
        if fw is None:
            fw = FrameworkRec(fw_id, info, _role(info), FrameworkLifecycle("NEW", f"framework {fw_id}"), time.time())
            fw.completed = type(fw.completed)(maxlen=self.cfg.max_completed_tasks)
            self.frameworks[fw_id] = fw
            self.allocator.add_framework(fw_id, fw.role, active=False)
        if not added and fw.lifecycle.state != "NEW" or added and call.get("framework_id"):
            # a re-subscription, or one with an id this master does not know (Mesos takes it as a
            # framework failing over from a former master)
            fw.reregistered_time = time.time()
        self._change_role(fw, _role(info))
        old_stream, fw.info, fw.principal = fw.stream, info, principal
        self.allocator.set_capabilities(fw.id, fw.has_capability("SHARED_RESOURCES"),
                                       fw.has_capability("RESERVATION_REFINEMENT"))
        fw.registrant = registrant_of(principal, source)
        fw.stream, fw.stream_id = stream, stream_id
        fw.unregistered_time = 0.0
        self._framework_event(fw, FrameworkSubscribes(), old_stream)
        (self.operator_events.framework_added if added else self.operator_events.framework_updated)(fw)
        return fw.id

    def _framework_event(self, fw: FrameworkRec, event: object, old_stream: Outbox | None = None) -> None:
        """Drive the framework's lifecycle; carry out what it returns (an unknown instruction raises)."""
        for ins in fw.lifecycle.handle(event):
            self._framework_do(ins, fw, old_stream)

    # ---- the framework lifecycle's instructions -------------------------
    def _persist_framework(self, _: PersistFramework, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        self.store.put(fw.id, fw.info, fw.failover_timeout, fw.registered_time)
        self._persist_soon()

    def _send_subscribed(self, _: SendSubscribed, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        fw.stream.send({"type": "SUBSCRIBED", "subscribed": {
            "framework_id": {"value": fw.id}, "heartbeat_interval_seconds": self.cfg.heartbeat_interval,
            "master_info": self.master_info()}})
        fw.stream.send({"type": "HEARTBEAT"})

    def _fail_over_old_stream(self, _: FailOverOldStream, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        if old_stream is not None:
            old_stream.send({"type": "ERROR", "error": {"message": "Framework failed over"}})
            old_stream.close()

    def _activate_framework(self, _: ActivateFramework, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        self.allocator.activate_framework(fw.id)
        self.schedule_allocation()

    def _cancel_failover_timer(self, _: CancelFailoverTimer, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        if fw.failover_timer:
            fw.failover_timer.cancel()
            fw.failover_timer = None

    def _deactivate_framework(self, _: DeactivateFramework, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        self.allocator.deactivate_framework(fw.id)
        fw.stream, fw.stream_id = None, None
        fw.unregistered_time = time.time()

    def _rescind_framework_offers(self, _: RescindFrameworkOffers, fw: FrameworkRec,
                                  old_stream: Outbox | None) -> None:
        for offer_id in list(fw.offers):
            self.remove_offer(offer_id, rescind=False)

    def _start_failover_timer(self, _: StartFailoverTimer, fw: FrameworkRec, old_stream: Outbox | None) -> None:
        timeout = fw.failover_timeout
        if not fw.tasks and not fw.completed and not fw.executors:
            # never used: it may not hold a registration (and a place in the store) for long
            timeout = min(timeout, self.cfg.unused_framework_timeout)
        fw.failover_timer = self.loop.call_later(timeout, self.failover_expired, fw.id)

    def _close_framework_stream(self, _: CloseFrameworkStream, fw: FrameworkRec,
                                old_stream: Outbox | None) -> None:
        if fw.stream:
            fw.stream.close()
            fw.stream, fw.stream_id = None, None

    def stream_closed(self, fw_id: str, stream: Outbox) -> None:
        """The framework's event stream broke; only its current stream counts."""
        fw = self.frameworks.get(fw_id)
        if fw is None or fw.stream is not stream or self.stopping:
            return
        self._framework_event(fw, FrameworkStreamClosed())
        self.operator_events.framework_updated(fw)

    def failover_expired(self, fw_id: str) -> None:
        fw = self.frameworks.get(fw_id)
        if fw is not None:
            self._framework_event(fw, FrameworkFailoverExpired())

    def recover_framework(self, fw_id: str, info: dict[str, Any], failover_timeout: float) -> FrameworkRec:
        """A framework known from the store or from an agent's tasks, waiting to re-subscribe."""
        fw = self.frameworks.get(fw_id)
        if fw is not None:
            return fw
        info = {"name": "", "user": "", **info, "id": {"value": fw_id}, "failover_timeout": failover_timeout}
        fw = FrameworkRec(fw_id, info, _role(info), FrameworkLifecycle("RECOVERED", f"framework {fw_id}"),
                          time.time())
        fw.principal = info.get("principal") or None   # it stays bound to who registered it
        self.frameworks[fw_id] = fw
        self.allocator.add_framework(fw_id, fw.role, active=False)
        fw.failover_timer = self.loop.call_later(failover_timeout, self.failover_expired, fw_id)
        self.operator_events.framework_added(fw)
        return fw

    def _remove_framework(self, _: RemoveFramework, fw: FrameworkRec, old_stream: Outbox | None = None) -> None:
        """TEARDOWN or failover timeout: kill its tasks, drop its offers, forget it."""
        if fw.failover_timer:
            fw.failover_timer.cancel()
        for offer_id in list(fw.offers):
            self.remove_offer(offer_id, rescind=False, recover=False)
        self.agent_registry.shutdown_framework_on_agents(fw)
        self.allocator.remove_framework(fw.id)
        self.operation_feedback.framework_removed(fw.id)
        self.frameworks.pop(fw.id, None)
        self.removed_framework_ids.add(fw.id)
        fw.unregistered_time = fw.unregistered_time or time.time()
        self.completed_frameworks.append(fw)
        del self.completed_frameworks[:-50]
        self.store.remove(fw.id)
        self._persist_soon()
        self.schedule_allocation()
        self.operator_events.framework_removed(fw)

    def _persist_soon(self) -> None:
        if not self._persist_pending and self.loop:
            self._persist_pending = True

            def flush() -> None:
                self._persist_pending = False
                self.store.flush()
            self.loop.call_later(0.05, flush)

    # ---- the other calls ----------------------------------------------
    def _call_teardown(self, fw: FrameworkRec, _: dict) -> None:
        self._framework_event(fw, FrameworkTornDown())

    def _call_revive(self, fw: FrameworkRec, _: dict) -> None:
        self.allocator.revive(fw.id)
        self.schedule_allocation()

    def _call_suppress(self, fw: FrameworkRec, _: dict) -> None:
        self.allocator.suppress(fw.id)

    def _call_update_framework(self, fw: FrameworkRec, body: dict) -> None:
        """Change a subscribed framework's FrameworkInfo as Mesos 1.12 does (the HTTP layer answers 200).

        Its principal, user and checkpoint cannot change (400); its roles pass
        the register_frameworks ACL (403). A changed role rescinds its offers
        and moves what it holds to the new role; `suppressed_roles` says
        whether its role is suppressed from now on (without REVIVE's clearing
        of filters). Operator subscribers see FRAMEWORK_UPDATED when the
        FrameworkInfo changed.
        """
        info = body["framework_info"]
        if fw.principal is not None and not info.get("principal"):
            info = {**info, "principal": fw.principal}   # as SUBSCRIBE keeps it
        problem = framework_update_problem(fw.info, info)
        if problem is not None:
            raise CallError(400, f"FrameworkInfo update is not valid: {problem}")
        self._check_register_acl(fw.principal, info)
        changed = info != fw.info
        self._change_role(fw, _role(info))
        fw.info = info
        self.allocator.set_capabilities(fw.id, fw.has_capability("SHARED_RESOURCES"),
                                       fw.has_capability("RESERVATION_REFINEMENT"))
        if fw.role in (body.get("suppressed_roles") or ()):
            self.allocator.suppress(fw.id)
        else:
            self.allocator.unsuppress(fw.id)
        self.schedule_allocation()
        if changed:
            self._persist_framework(PersistFramework(), fw, None)
            self.operator_events.framework_updated(fw)

    def _change_role(self, fw: FrameworkRec, role: str) -> None:
        """Move a framework to another role: its offers (of the old role) are rescinded, and what its tasks
        hold is counted in the new role (this master keeps one role per framework; Mesos would keep running
        tasks in the role they were launched in)."""
        if role == fw.role:
            return
        for offer_id in list(fw.offers):
            self.remove_offer(offer_id)
        self.allocator.change_role(fw.id, role)
        fw.role = role
        for task in fw.tasks.values():
            task.role = role

    def _call_decline(self, fw: FrameworkRec, body: dict) -> None:
        refuse = _refuse_seconds(body.get("filters"))
        for oid in body.get("offer_ids") or []:
            offer = self.offers.get(value(oid) or "")
            if offer is not None and offer.framework_id == fw.id:
                self.remove_offer(offer.id, rescind=False, refuse=refuse)

    def _call_accept(self, fw: FrameworkRec, body: dict) -> None:
        offers, error = self._take_offers(fw, body.get("offer_ids") or [])
        ops = [op for op in body.get("operations") or [] if isinstance(op, dict)]
        if error:
            state = "TASK_DROPPED" if fw.has_capability("PARTITION_AWARE") else "TASK_LOST"
            for tasks, _ in filter(None, map(_launch_operation, ops)):
                for t in tasks:
                    self._master_update(fw, _task_id(t), state, "REASON_INVALID_OFFERS",
                                        f"Task launched with invalid offers: {error}")
            for offer in offers:
                self.allocator.recover(fw.id, offer.agent_id, offer.resources)
            self.schedule_allocation()
            return
        remaining = sum((o.resources for o in offers), Resources())
        agent_id = offers[0].agent_id if offers else None
        try:
            # In order, as Mesos applies them: a RESERVE changes what a later LAUNCH in the same call may use.
            for op in ops:
                if op.get("type") in CONVERSIONS and agent_id is not None:
                    remaining = self._apply_conversion(fw, op, agent_id, remaining)
                    continue
                launch = _launch_operation(op)
                if launch is None:
                    continue
                tasks, group_executor = launch
                if op.get("id") is not None:  # Mesos: operation feedback is not for launches
                    self._refuse_launch_with_id(fw, op["type"], tasks, agent_id)
                    continue
                for batch in ([tasks] if group_executor is not None else [[t] for t in tasks]):
                    remaining = self._launch(fw, batch, group_executor, agent_id, remaining)
        finally:
            # What no task took goes back, even if a launch failed unexpectedly: an offer never leaks.
            if offers and not remaining.is_empty():
                refuse = _refuse_seconds(body.get("filters"))
                self.allocator.recover(fw.id, agent_id, remaining, refuse, self.now())
            self.schedule_allocation()

    def _apply_conversion(self, fw: FrameworkRec, op: dict, agent_id: str, remaining: Resources) -> Resources:
        """A RESERVE, UNRESERVE, CREATE, DESTROY, GROW_VOLUME or SHRINK_VOLUME of an ACCEPT, against what is left
        of its offers; an invalid one is dropped (logged; OPERATION_ERROR if it has an id), as Mesos drops it,
        and a LAUNCH that needed it then fails on its resources."""
        kind = op["type"]
        op = _with_allocation_info(op, fw.role)
        agent = self.agent_registry.agents.get(agent_id)
        try:
            if agent is None:
                raise OperationInvalid(f"agent {agent_id} is gone")
            try:
                before, after = conversion(kind, op.get(kind.lower()) or {}, fw.principal, {fw.role},
                                           agent.total, agent.used())
            except OperationInvalid as exc:  # Mesos names the agent after a validation error
                raise OperationInvalid(f"{exc}; on agent {agent.id} at {agent.pid} ({agent.hostname})") from None
            if not remaining.contains(before):
                raise OperationInvalid(f"{remaining} does not contain {before}")
            if kind == "CREATE" and not after.shared().is_empty() and not fw.has_capability("SHARED_RESOURCES"):
                raise OperationInvalid(f"Create volume operation for '{after.shared()}' has been attempted by "
                                       f"framework '{fw.id}' with no SHARED_RESOURCES capability")
            refused = None if self.cfg.acls is None else self.cfg.acls.operation_refusal(
                kind, op.get(kind.lower()) or {}, fw.principal)
            if refused is not None:
                raise OperationInvalid(refused)
        except OperationInvalid as exc:
            log.warning("dropped a %s operation of framework %s: %s", kind, fw.id, exc)
            self.operation_feedback.error(fw, op, str(exc))
            return remaining
        self.convert_resources(agent_id, before, after, fw.id)
        if op.get("id") is not None:
            self.operation_feedback.finished(fw, op, agent_id)
        else:
            self.operation_feedback.applied_without_feedback(kind)
        return remaining - before + after

    def _refuse_launch_with_id(self, fw: FrameworkRec, kind: str, tasks: list[dict], agent_id: str | None) -> None:
        """A LAUNCH or LAUNCH_GROUP with an operation id: TASK_ERROR for each task, as Mesos answers it."""
        reason = "REASON_TASK_INVALID" if kind == "LAUNCH" else "REASON_TASK_GROUP_INVALID"
        for task in tasks:
            self._master_update(fw, _task_id(task), "TASK_ERROR", reason,
                                f"The `id` field cannot be set on {kind} operations", agent_id=agent_id)

    def convert_resources(self, agent_id: str, before: Resources, after: Resources,
                          framework_id: str | None = None) -> None:
        """Apply a checked conversion (reservation_ops) to an agent: the allocator's accounting, the agent's
        total, and the agent's own copy of what operations made (it reports it when it registers with a new
        master)."""
        agent = self.agent_registry.agents[agent_id]
        self.allocator.convert(agent_id, before, after, framework_id)
        agent.total = agent.total - before + after
        if agent.link is not None:
            agent.link.send({"type": "CHECKPOINT_RESOURCES", "agent_id": agent_id,
                             "resources": agent.total.made_by_operations().to_json()})

    def _take_offers(self, fw: FrameworkRec, ids: list) -> tuple[list[OfferRec], str | None]:
        """Remove the named offers; (the valid ones, the first error or None)."""
        taken: list[OfferRec] = []
        seen: set[str] = set()
        error = None if ids else "No offers specified"
        for oid in ids:
            offer_id = value(oid) or ""
            offer = self.offers.get(offer_id)
            if offer_id in seen:
                error = error or f"Duplicate offer {offer_id} in offer list"
            elif offer is None or offer.framework_id != fw.id:
                error = error or f"Offer {offer_id} is no longer valid"
            elif taken and offer.agent_id != taken[0].agent_id:
                error = error or f"Aggregated offers must belong to one single agent; offer {offer_id} does not"
            else:
                self.remove_offer(offer_id, rescind=False, recover=False)
                taken.append(offer)
            seen.add(offer_id)
        return taken, error

    def _launch(self, fw: FrameworkRec, tasks: list[dict], group_executor: dict | None, agent_id: str,
                remaining: Resources) -> Resources:
        """Validate one LAUNCH (one task) or LAUNCH_GROUP (all or nothing) against what is left of the offers
        (launch_validation.py); send it to its agent. Returns what is left."""
        try:
            launch = check_launch(fw, tasks, group_executor, agent_id, remaining, fw.role)
            self._authorize_users(fw, tasks)
        except LaunchInvalid as exc:
            reason = "REASON_TASK_GROUP_INVALID" if group_executor is not None else "REASON_TASK_INVALID"
            for task in tasks:
                self._master_update(fw, _task_id(task), "TASK_ERROR", reason, str(exc))
            return remaining
        agent = self.agent_registry.agents.get(agent_id)
        if agent is None or not agent.active:
            state = "TASK_DROPPED" if fw.has_capability("PARTITION_AWARE") else "TASK_LOST"
            for task in tasks:
                self._master_update(fw, _task_id(task), state, "REASON_AGENT_REMOVED", "Agent is not connected")
            return remaining
        if launch.executor is not None:
            executor_id = value(launch.executor.get("executor_id")) or ""
            fw.executors[(agent_id, executor_id)] = {"info": {**launch.executor, "framework_id": {"value": fw.id}},
                                                     "agent_id": agent_id, "resources": launch.executor_resources}
        for task, need in launch.tasks:
            task_id = _task_id(task)
            executor = group_executor or task.get("executor") or {}
            rec = TaskRec(fw.id, task_id, agent_id, task, need, role=fw.allocation_role or fw.role,
                          executor_id=value(executor.get("executor_id")) or "")
            # STAGING is the master's own state of the task, never a status update: Mesos's
            # task.statuses start with the executor's first update (TASK_STARTING), and so do ours.
            fw.tasks[task_id] = rec
            agent.tasks[(fw.id, task_id)] = rec
            self.count("master/tasks_launched")
            self.operator_events.task_added(rec)
        if group_executor is None:
            agent.link.send({"type": "RUN_TASK", "agent_id": agent_id, "framework_id": fw.id,
                             "framework": _framework_brief(fw), "task": tasks[0]})
        else:
            agent.link.send({"type": "RUN_TASK_GROUP", "agent_id": agent_id, "framework_id": fw.id,
                             "framework": _framework_brief(fw), "executor": group_executor, "tasks": tasks})
        return remaining - launch.total.without_shared()   # a shared volume stays for the next task

    def _call_kill(self, fw: FrameworkRec, body: dict) -> None:
        task_id = value(body.get("task_id"))
        task = fw.tasks.get(task_id or "")
        if task is None:
            self._reconcile_one(fw, task_id or "")
            return
        policy = body.get("kill_policy") or task.info.get("kill_policy") or {}
        task.kill_grace = _grace(policy, self.cfg.default_kill_grace)
        self.agent_registry.send_kill(task)

    def _call_acknowledge(self, fw: FrameworkRec, body: dict) -> None:
        self.agent_registry.forward_ack(fw, value(body["agent_id"]), value(body["task_id"]), body["uuid"])

    def _call_reconcile(self, fw: FrameworkRec, body: dict) -> None:
        asked = [(value(t.get("task_id")), value(t.get("agent_id"))) for t in body.get("tasks") or []
                 if isinstance(t, dict)]
        if not asked:
            for task in fw.tasks.values():
                self._send_reconciled(fw, task)
            return
        for task_id, agent_id in asked:
            self._reconcile_one(fw, task_id or "", agent_id)

    def _reconcile_one(self, fw: FrameworkRec, task_id: str, agent_id: str | None = None) -> None:
        task = fw.tasks.get(task_id)
        if task is not None:
            self._send_reconciled(fw, task)
            return
        done = next((t for t in reversed(fw.completed) if t.task_id == task_id), None)
        if done is not None:
            self._send_reconciled(fw, done)
            return
        if self.awaiting_agent(agent_id):
            self.parked_reconciliations.setdefault(agent_id, []).append((fw.id, task_id))
            return
        state = "TASK_UNKNOWN" if fw.has_capability("PARTITION_AWARE") else "TASK_LOST"
        self._master_update(fw, task_id, state, "REASON_RECONCILIATION", "Reconciliation: Task is unknown")

    def _send_reconciled(self, fw: FrameworkRec, task: TaskRec) -> None:
        last = task.status or {}
        status = make_status(task.task_id, task.state, agent_id=task.agent_id, source="SOURCE_MASTER",
                             reason="REASON_RECONCILIATION", message="Reconciliation: Latest task state",
                             container_status=last.get("container_status"))
        if fw.stream:
            fw.stream.send(update_event(status))

    def _call_message(self, fw: FrameworkRec, body: dict) -> None:
        """MESSAGE: the data goes to the executor on its agent (dropped, and counted invalid, when the agent
        is not connected; Mesos does not tell the framework either)."""
        self.count("master/messages_framework_to_executor")
        agent = self.agent_registry.agents.get(value(body.get("agent_id")))
        if agent is None or not agent.active or agent.link is None:
            self.count("master/invalid_framework_to_executor_messages")
            return
        self.count("master/valid_framework_to_executor_messages")
        agent.link.send({"type": "FRAMEWORK_MESSAGE", "agent_id": agent.id, "framework_id": fw.id,
                         "executor_id": value(body.get("executor_id")), "data": body.get("data") or ""})

    def _call_shutdown(self, fw: FrameworkRec, body: dict) -> None:
        """SHUTDOWN of one of the framework's executors on an agent."""
        agent = self.agent_registry.agents.get(value(body.get("agent_id")))
        if agent is not None and agent.active and agent.link is not None:
            agent.link.send({"type": "SHUTDOWN_EXECUTOR", "agent_id": agent.id, "framework_id": fw.id,
                             "executor_id": value(body.get("executor_id"))})

    def _call_request(self, fw: FrameworkRec, body: dict) -> None:
        self.count("master/messages_resource_request")

    def _master_update(self, fw: FrameworkRec, task_id: str, state: str, reason: str, message: str,
                       agent_id: str | None = None) -> None:
        """A status the master makes itself (no uuid: frameworks do not acknowledge it)."""
        self.count(f"master/tasks_{state[5:].lower()}")
        status = make_status(task_id, state, agent_id=agent_id, source="SOURCE_MASTER", reason=reason,
                             message=message)
        count_terminal(self, fw, status)
        if fw.stream:
            fw.stream.send(update_event(status))

    # ---- offers and allocation ------------------------------------------
    def schedule_allocation(self) -> None:
        """Run an allocation round soon (coalesced): resources freed or demand changed.

        Rounds start at least ALLOCATION_SPACING_S apart, so what changes within
        a few milliseconds goes into one round: at 50,000 agents nearly every
        loop pass freed something, and a round per pass cost the master more
        than the offers it made, in one OFFERS event per framework per pass
        (issue 17). Mesos's allocator batches its rounds too (`--allocation_interval`).
        """
        if self._alloc_pending is None and self.loop is not None and self.leader_address is None \
                and not self.stopping:
            wait = self._last_round_at + ALLOCATION_SPACING_S - self.loop.time()
            self._alloc_pending = (self.loop.call_later(wait, self._allocate) if wait > 0 else
                                   self.loop.call_soon(self._allocate))

    def _allocate(self) -> None:
        if self._alloc_pending is not None:
            self._alloc_pending.cancel()   # a periodic round came first: it takes what the scheduled one would
            self._alloc_pending = None
        if self.leader_address is not None:
            return
        if self.loop is not None:
            self._last_round_at = self.loop.time()
        started = time.perf_counter()
        grants = self.allocator.allocate(self.now())
        self.last_allocation_s = time.perf_counter() - started
        self.allocation_runs += 1
        self.allocation_ms.append(self.last_allocation_s * 1000.0)
        by_fw: dict[str, list[dict[str, Any]]] = {}
        for g in grants:
            by_fw.setdefault(g.framework_id, []).append(self._make_offer(g))
        for fw_id, offers in by_fw.items():
            fw = self.frameworks[fw_id]
            if fw.stream:
                fw.stream.send({"type": "OFFERS", "offers": {"offers": offers}})
        if self.maintenance.active:
            self.inverse_offers.send()

    def _make_offer(self, g: Grant) -> dict[str, Any]:
        agent = self.agent_registry.agents[g.agent_id]
        offer = OfferRec(self.next_id("O"), g.framework_id, g.agent_id, g.resources)
        self.offers[offer.id] = offer
        self.frameworks[g.framework_id].offers.add(offer.id)
        agent.offers.add(offer.id)
        if self.cfg.offer_timeout is not None:
            offer.timer = self.loop.call_later(self.cfg.offer_timeout, self.remove_offer, offer.id, True)
        # A MULTI_ROLE framework learns from allocation_info which of its roles an offer is for
        # (and must hand it back in ACCEPT); others get offers without it, as from Mesos.
        fw = self.frameworks[g.framework_id]
        role = fw.allocation_role
        resources = offered_form(g.resources.to_json(allocation_role=role), fw.has_capability("RESERVATION_REFINEMENT"))
        out = {"id": {"value": offer.id}, "framework_id": {"value": g.framework_id},
               "agent_id": {"value": g.agent_id}, "hostname": agent.hostname, "resources": resources}
        if agent.attributes:
            out["attributes"] = agent.attributes
        if role is not None:
            out["allocation_info"] = {"role": role}
        url = agent.url()
        if url:
            out["url"] = url
        if self.maintenance.active:   # an agent of a DRAINING machine: when it is going away
            unavailability = self.maintenance.unavailability_of(agent.hostname, agent.ip)
            if unavailability is not None:
                out["unavailability"] = unavailability
        offer.message = out
        return out

    def remove_offer(self, offer_id: str, rescind: bool = True, recover: bool = True,
                      refuse: float | None = None) -> None:
        """Forget an offer; optionally tell its framework (RESCIND) and give its resources back."""
        offer = self.offers.pop(offer_id, None)
        if offer is None:
            return
        if offer.timer:
            offer.timer.cancel()
        fw = self.frameworks.get(offer.framework_id)
        if fw is not None:
            fw.offers.discard(offer_id)
            if rescind and fw.stream:
                fw.stream.send({"type": "RESCIND", "rescind": {"offer_id": {"value": offer_id}}})
        agent = self.agent_registry.agents.get(offer.agent_id)
        if agent is not None:
            agent.offers.discard(offer_id)
        if recover:
            self.allocator.recover(offer.framework_id, offer.agent_id, offer.resources, refuse, self.now())
            self.schedule_allocation()

    def _heartbeat(self) -> None:
        for fw in self.frameworks.values():
            if fw.stream:
                fw.stream.send({"type": "HEARTBEAT"})
        self.operator_events.heartbeat()

    def master_info(self) -> dict[str, Any]:
        """This master's MasterInfo as Mesos writes it: `ip` as a little-endian uint32, `pid`, and no
        capabilities (AGENT_UPDATE and AGENT_DRAINING name an agent message and draining states this master
        does not have; QUOTA_V2, though its calls are served, would break mesos-go v0.0.11's JSON decoder:
        README)."""
        host = self.cfg.advertise_host or self.cfg.host
        ip = ipv4_of(host)
        return {"id": self.id, "ip": ipv4_as_uint32(ip), "port": self.cfg.port, "pid": f"master@{ip}:{self.cfg.port}",
                "hostname": host, "version": VERSION, "address": {"hostname": host, "ip": host, "port": self.cfg.port}}


def _task_user(fw: FrameworkRec, task: dict[str, Any]) -> str:
    """Whom a task runs as: its CommandInfo.user, else its framework's FrameworkInfo.user."""
    command = task.get("command") if isinstance(task.get("command"), dict) else {}
    return str(command.get("user") or fw.info.get("user") or "")


def framework_update_problem(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """What UPDATE_FRAMEWORK may not change, as Mesos 1.12 checks it: principal, user and checkpoint."""
    if old.get("principal") != new.get("principal"):
        return "Changing framework's principal is not allowed."
    if (old.get("user") or "") != (new.get("user") or ""):
        return (f"Updating 'FrameworkInfo.user' is unsupported; attempted to update from "
                f"'{old.get('user') or ''}' to '{new.get('user') or ''}'")
    if bool(old.get("checkpoint")) != bool(new.get("checkpoint")):
        return (f"Updating 'FrameworkInfo.checkpoint' is unsupported; attempted to update from "
                f"'{str(bool(old.get('checkpoint'))).lower()}' to '{str(bool(new.get('checkpoint'))).lower()}'")
    return None


def _roles(info: dict[str, Any]) -> list[str]:
    return list(info.get("roles") or []) or [info.get("role") or "*"]


def _role(info: dict[str, Any]) -> str:
    roles = info.get("roles") or []
    return info.get("role") or (roles[0] if roles else "*")


def registrant_of(principal: str | None, source: str | None) -> str:
    """Who a registration counts against for max_frameworks_per_principal: its authenticated principal,
    else the address it came from."""
    return f"principal '{principal}'" if principal is not None else f"anonymous@{source or 'unknown'}"


def _refuse_seconds(filters: Any) -> float:
    """A filter's refuse_seconds (call_validation refused non-finite and out-of-range ones); negative is 0,
    as in Mesos."""
    if isinstance(filters, dict) and "refuse_seconds" in filters:
        try:
            seconds = float(filters["refuse_seconds"])
        except (TypeError, ValueError):
            return DEFAULT_REFUSE_S
        return max(0.0, seconds) if math.isfinite(seconds) else DEFAULT_REFUSE_S
    return DEFAULT_REFUSE_S


def _launch_operation(op: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any] | None] | None:
    """(tasks, the group's executor or None) of a LAUNCH or LAUNCH_GROUP; None for other operations."""
    if op.get("type") == "LAUNCH":
        tasks = [t for t in (op.get("launch") or {}).get("task_infos") or [] if isinstance(t, dict)]
        return None if not tasks else (tasks, None)
    if op.get("type") == "LAUNCH_GROUP":
        body = op.get("launch_group") or {}
        group = body.get("task_group") or {}
        return [t for t in group.get("tasks") or [] if isinstance(t, dict)], body.get("executor") or {}
    return None


def _with_allocation_info(op: dict[str, Any], role: str) -> dict[str, Any]:
    """`op` with the offer's allocation_info on each of its resources that lacks it, as Mesos injects it
    before it checks the operation (a framework that is not MULTI_ROLE never sees allocation_info)."""
    body = op.get(op["type"].lower())
    if not isinstance(body, dict):
        return op
    listed = {k: v for k, v in body.items() if k in ("resources", "volumes") and isinstance(v, list)}
    if not listed:
        return op
    injected = {k: [{"allocation_info": {"role": role}, **r} if isinstance(r, dict) and "allocation_info" not in r
                    else r for r in v] for k, v in listed.items()}
    return {**op, op["type"].lower(): {**body, **injected}}


def _task_id(task: dict[str, Any]) -> str:
    return value(task.get("task_id")) or ""


def _grace(policy: dict[str, Any], default: float) -> float:
    ns = (policy.get("grace_period") or {}).get("nanoseconds")
    try:
        return max(0.0, int(ns) / 1e9) if ns is not None else default
    except (TypeError, ValueError):
        return default


def _framework_brief(fw: FrameworkRec) -> dict[str, Any]:
    return {k: fw.info[k] for k in ("name", "user", "role", "roles", "capabilities", "principal") if k in fw.info}


