"""Operation feedback: the status of each offer operation a framework gave an `id`, as Mesos 1.12 keeps it.

A collaborator of `master_core.Master`. A RESERVE, UNRESERVE, CREATE,
DESTROY, GROW_VOLUME or SHRINK_VOLUME with an `id` in an ACCEPT asks for
feedback: the framework gets UPDATE_OPERATION_STATUS with the operation's
outcome, OPERATION_FINISHED (with a status uuid it must acknowledge) or
OPERATION_ERROR (invalid: no uuid, nothing to acknowledge). The master keeps
a finished operation until ACKNOWLEDGE_OPERATION_STATUS names that uuid, and
RECONCILE_OPERATIONS answers from what it keeps, on the event stream, as
Mesos does (the call itself is answered 202).

What differs from Mesos, and why: Mesos's agent applies the operation and
reports it (OPERATION_PENDING until then). Here the master applies a
conversion at once and tells the agent (CHECKPOINT_RESOURCES, in order on
the agent's link), so the status is FINISHED when sent. Like Mesos's agent,
the master sends an unacknowledged status again, 10 s after, then twice as
late each time up to 10 min (`resend_unacknowledged`).

A master's memory does not outlive it, so each agent keeps the operations
followed on it (CHECKPOINT_OPERATIONS: the whole list, sent whenever it
changes) and reports them when it re-registers, as Mesos's agents report
theirs: a newly elected master follows them again (`recovered`), lists
them, answers their reconciliation, and sends an unacknowledged status
again once its framework is back.

Mesos's `master/operations/*` metrics count here too: `pending`,
`recovering` and `unreachable` are what is in that state now, the terminal
states count every operation that reached them, and `total` is their sum.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.fields import value

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import FrameworkRec

log = logging.getLogger(__name__)

# Mesos's agent's retry of an unacknowledged status update: 10 s, doubling up to 10 min.
RETRY_MIN_S = 10.0
RETRY_MAX_S = 600.0
TERMINAL = frozenset({"OPERATION_FINISHED", "OPERATION_FAILED", "OPERATION_ERROR", "OPERATION_DROPPED",
                      "OPERATION_GONE_BY_OPERATOR"})
# What RECONCILE_OPERATIONS answers for an operation the master does not know, by what it knows of the agent.
UNKNOWN_ON_A_REGISTERED_AGENT = ("OPERATION_UNKNOWN", "Reconciliation: Operation is unknown")
AGENT_RECOVERED = ("OPERATION_RECOVERING", "Reconciliation: Agent is recovered but has not re-registered")
AGENT_UNREACHABLE = ("OPERATION_UNREACHABLE", "Reconciliation: Agent is unreachable")
AGENT_GONE = ("OPERATION_GONE_BY_OPERATOR", "Reconciliation: Agent marked gone by operator")
AGENT_UNKNOWN = ("OPERATION_UNKNOWN", "Reconciliation: Both operation and agent are unknown")
NO_AGENT_NAMED = ("OPERATION_UNKNOWN", "Reconciliation: Operation is unknown and no 'agent_id' was provided")


def operation_status(state: str, operation_id: str | None, *, message: str | None = None,
                     agent_id: str | None = None, uuid_bytes: bytes | None = None) -> dict[str, Any]:
    """A Mesos v1 OperationStatus in JSON; only the fields that are set appear."""
    status: dict[str, Any] = {"state": state}
    if operation_id is not None:
        status["operation_id"] = {"value": operation_id}
    if message is not None:
        status["message"] = message
    if agent_id is not None:
        status["agent_id"] = {"value": agent_id}
    if uuid_bytes is not None:
        status["uuid"] = {"value": base64.b64encode(uuid_bytes).decode()}
    return status


def status_event(status: dict[str, Any]) -> dict[str, Any]:
    return {"type": "UPDATE_OPERATION_STATUS", "update_operation_status": {"status": status}}


@dataclass
class OperationRec:
    """One followed operation: Mesos's v1 `Operation` (what GET_OPERATIONS lists)."""

    framework_id: str
    agent_id: str
    info: dict[str, Any]
    uuid: bytes
    statuses: list[dict[str, Any]] = field(default_factory=list)
    retry_at: float | None = None   # when its unacknowledged latest status goes again (None: nothing to send)
    retry_after: float = RETRY_MIN_S

    @property
    def id(self) -> str:
        return value(self.info.get("id")) or ""

    @property
    def kind(self) -> str:
        return str(self.info.get("type", "")).lower()

    def latest(self) -> dict[str, Any]:
        return self.statuses[-1]

    def to_json(self) -> dict[str, Any]:
        return {"framework_id": {"value": self.framework_id}, "agent_id": {"value": self.agent_id},
                "info": self.info, "latest_status": self.latest(), "statuses": list(self.statuses),
                "uuid": {"value": base64.b64encode(self.uuid).decode()}}


class OperationFeedback:
    """The followed operations of every framework, their statuses to frameworks, and their metrics."""

    def __init__(self, master: Master) -> None:
        self.m = master
        self.by_framework: dict[str, dict[str, OperationRec]] = {}
        self.reached: Counter[tuple[str, str]] = Counter()   # (operation kind, state) -> operations

    # ---- ACCEPT ---------------------------------------------------------

    def finished(self, fw: FrameworkRec, op: dict[str, Any], agent_id: str) -> None:
        """`op` (with an id) was applied: follow it, and tell the framework, which must acknowledge."""
        rec = OperationRec(fw.id, agent_id, op, uuid.uuid4().bytes)
        rec.statuses.append(operation_status("OPERATION_FINISHED", rec.id, agent_id=agent_id,
                                             uuid_bytes=uuid.uuid4().bytes))
        self.by_framework.setdefault(fw.id, {})[rec.id] = rec
        self.reached[(rec.kind, "OPERATION_FINISHED")] += 1
        self._send(fw, rec.latest())
        rec.retry_at = self.m.now() + rec.retry_after
        self._checkpoint(agent_id)

    def recovered(self, agent_id: str, operations: list[Any]) -> None:
        """A re-registering agent reported the operations it keeps (a master before this one followed them):
        follow each one not followed already; an unacknowledged latest status goes again after RETRY_MIN_S
        (its framework re-subscribes meanwhile). What cannot be read is skipped (logged)."""
        for item in operations:
            rec = _operation_from_json(item, agent_id)
            if rec is None:
                log.warning("agent %s reported an operation that cannot be read; ignored: %.200r", agent_id, item)
                continue
            known = self.by_framework.setdefault(rec.framework_id, {})
            if rec.id in known:
                continue
            known[rec.id] = rec
            self.reached[(rec.kind, rec.latest()["state"])] += 1
            if "uuid" in rec.latest():
                rec.retry_at = self.m.now() + RETRY_MIN_S

    def resend_unacknowledged(self) -> None:
        """Send again each latest status not acknowledged in time (a timer of the master runs this)."""
        now = self.m.now()
        for ops in self.by_framework.values():
            for rec in ops.values():
                if rec.retry_at is None or now < rec.retry_at:
                    continue
                fw = self.m.frameworks.get(rec.framework_id)
                if fw is not None:
                    self._send(fw, rec.latest())
                rec.retry_after = min(RETRY_MAX_S, rec.retry_after * 2)
                rec.retry_at = now + rec.retry_after

    def error(self, fw: FrameworkRec, op: dict[str, Any], message: str) -> None:
        """`op` was invalid (Mesos: dropped at validation): OPERATION_ERROR, without agent or uuid, as Mesos
        sends it; counted even without an id, as Mesos counts it."""
        self.reached[(str(op.get("type", "")).lower(), "OPERATION_ERROR")] += 1
        if op.get("id") is not None:
            self._send(fw, operation_status("OPERATION_ERROR", value(op.get("id")), message=message))

    def applied_without_feedback(self, kind: str) -> None:
        """An operation without an id (or the operator's) was applied: Mesos counts it finished too."""
        self.reached[(kind.lower(), "OPERATION_FINISHED")] += 1

    # ---- calls ----------------------------------------------------------

    def acknowledge(self, fw: FrameworkRec, body: dict[str, Any]) -> None:
        """ACKNOWLEDGE_OPERATION_STATUS: a terminal status acknowledged ends the operation. What names no
        known operation or status is ignored (counted invalid), as Mesos ignores it."""
        rec = self.by_framework.get(fw.id, {}).get(value(body.get("operation_id")) or "")
        try:
            acked = base64.b64decode(body.get("uuid") or "", validate=True)
        except ValueError:
            acked = b""
        status = None if rec is None else next(
            (s for s in rec.statuses if base64.b64decode(s.get("uuid", {}).get("value", "")) == acked), None)
        if rec is None or status is None or value(body.get("agent_id")) != rec.agent_id:
            self.m.count("master/invalid_operation_status_update_acknowledgements")
            return
        self.m.count("master/valid_operation_status_update_acknowledgements")
        if status["state"] in TERMINAL:
            self._forget(rec)

    def reconcile(self, fw: FrameworkRec, body: dict[str, Any]) -> None:
        """RECONCILE_OPERATIONS: the latest status of each asked operation (all of the framework's when none
        is named), without uuid (not to be acknowledged), on the event stream."""
        known = self.by_framework.get(fw.id, {})
        asked = [o for o in body.get("operations") or [] if isinstance(o, dict)]
        if not asked:
            for rec in known.values():
                self._send(fw, _without_uuid(rec.latest()))
            return
        for item in asked:
            op_id, agent_id = value(item.get("operation_id")), value(item.get("agent_id"))
            rec = known.get(op_id or "")
            if rec is not None:
                self._send(fw, _without_uuid(rec.latest()))
                continue
            state, message = self._unknown(agent_id)
            self._send(fw, operation_status(state, op_id, message=message, agent_id=agent_id))

    def _unknown(self, agent_id: str | None) -> tuple[str, str]:
        registry = self.m.agent_registry
        if agent_id is None:
            return NO_AGENT_NAMED
        if agent_id in registry.agents:
            return UNKNOWN_ON_A_REGISTERED_AGENT
        if self.m.awaiting_agent(agent_id):
            return AGENT_RECOVERED
        if agent_id in registry.gone_agents:
            return AGENT_GONE
        if agent_id in registry.removed_agents:
            return AGENT_UNREACHABLE
        return AGENT_UNKNOWN

    # ---- agents and frameworks going away ---------------------------------

    def agent_removed(self, agent_id: str, gone: bool) -> None:
        """The agent was removed (unreachable, or gone): its operations end there, as Mesos ends them."""
        state = "OPERATION_GONE_BY_OPERATOR" if gone else "OPERATION_UNREACHABLE"
        ending = [r for ops in self.by_framework.values() for r in ops.values() if r.agent_id == agent_id]
        for rec in ending:
            self.reached[(rec.kind, state)] += 1
            self._forget(rec)

    def framework_removed(self, framework_id: str) -> None:
        for agent_id in {rec.agent_id for rec in self.by_framework.pop(framework_id, {}).values()}:
            self._checkpoint(agent_id)

    # ---- views ------------------------------------------------------------

    def operations(self) -> list[dict[str, Any]]:
        """GET_OPERATIONS: every operation followed now."""
        return [rec.to_json() for ops in self.by_framework.values() for rec in ops.values()]

    def metrics(self, kinds: tuple[str, ...], states: tuple[str, ...]) -> dict[str, float]:
        """`master/operations/<state>` and `master/operations/<kind>/<state>` (states lower-case, without the
        OPERATION_ prefix; `total` is the sum over the states)."""
        out: dict[str, float] = {}
        for prefix, wanted in [("master/operations/", None)] + [(f"master/operations/{k}/", k) for k in kinds]:
            counts = {s: float(sum(n for (kind, state), n in self.reached.items()
                                   if state == f"OPERATION_{s.upper()}" and wanted in (None, kind)))
                      for s in states if s != "total"}
            out.update({prefix + s: n for s, n in counts.items()})
            out[prefix + "total"] = sum(counts.values())
        return out

    # ---- shell ------------------------------------------------------------

    def _forget(self, rec: OperationRec) -> None:
        ops = self.by_framework.get(rec.framework_id, {})
        ops.pop(rec.id, None)
        if not ops:
            self.by_framework.pop(rec.framework_id, None)
        self._checkpoint(rec.agent_id)

    def _checkpoint(self, agent_id: str) -> None:
        """Tell the agent the operations followed on it now (it keeps them for the next master)."""
        agent = self.m.agent_registry.agents.get(agent_id)
        if agent is not None and agent.link is not None:
            agent.link.send({"type": "CHECKPOINT_OPERATIONS", "agent_id": agent_id, "operations": [
                rec.to_json() for ops in self.by_framework.values() for rec in ops.values()
                if rec.agent_id == agent_id]})

    def _send(self, fw: FrameworkRec, status: dict[str, Any]) -> None:
        if fw.stream is not None:
            fw.stream.send(status_event(status))


def _without_uuid(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k != "uuid"}


def _operation_from_json(item: Any, agent_id: str) -> OperationRec | None:
    """An OperationRec from its `to_json` form, as an agent kept it; None when it is not that form."""
    try:
        statuses = [dict(s) for s in item["statuses"]]
        rec = OperationRec(str(item["framework_id"]["value"]), agent_id, dict(item["info"]),
                           base64.b64decode(item["uuid"]["value"], validate=True), statuses)
        if not statuses or not rec.id or not all(isinstance(s.get("state"), str) for s in statuses):
            return None
        return rec
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
