"""The operator API's RESERVE/UNRESERVE_RESOURCES and CREATE/DESTROY_VOLUMES on the master, with Mesos 1.12's
answers.

The operation is checked (reservation_ops.py), then the resources must be on
the agent and not in use: free, or held in outstanding offers, which are
rescinded to free them, as Mesos rescinds offers for an operator's
reservation. What is not there gets 409 Conflict with Mesos's text
("<available> does not contain <wanted>"). Done, it answers 202 Accepted:
the agent is told to keep the reservation (CHECKPOINT_RESOURCES), and it
reports it to any master it registers with later, so a reservation outlives
a master failover. A persistent volume is a directory the agent makes for
it, kept until DESTROY.
"""

from __future__ import annotations

from typing import Any

from scylla_singa.mesos.api.fields import value
from scylla_singa.mesos.api.resources import Resources
from .master_core import Master
from .master_records import AgentRec
from .reservation_ops import OperationInvalid, create, destroy, reserve, unreserve, volume_conflict

JsonDict = dict[str, Any]


class ReservationRefused(Exception):
    """A reservation call refused: HTTP status and Mesos's text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def reserve_resources(m: Master, body: JsonDict, principal: str | None) -> None:
    """RESERVE_RESOURCES: reserve an agent's unreserved resources for a role."""
    agent = _agent(m, body)
    try:
        before, after = reserve(body.get("resources"), principal)
    except OperationInvalid as exc:
        raise ReservationRefused(400, _invalid("RESERVE", agent, exc)) from None
    _free_on_agent(m, agent, before)
    m.convert_resources(agent.id, before, after)
    m.schedule_allocation()


def unreserve_resources(m: Master, body: JsonDict) -> None:
    """UNRESERVE_RESOURCES: give an agent's dynamically reserved resources back to every role."""
    agent = _agent(m, body)
    try:
        before, after = unreserve(body.get("resources"))
    except OperationInvalid as exc:
        raise ReservationRefused(400, _invalid("UNRESERVE", agent, exc)) from None
    _free_on_agent(m, agent, before)
    m.convert_resources(agent.id, before, after)
    m.schedule_allocation()


def create_volumes(m: Master, body: JsonDict, principal: str | None) -> None:
    """CREATE_VOLUMES: make persistent volumes of an agent's reserved disk."""
    agent = _agent(m, body)
    try:
        before, after = create(body.get("volumes"), principal)
        conflict = volume_conflict("CREATE", after, agent.total, _in_use(agent))
        if conflict:
            raise OperationInvalid(conflict)
    except OperationInvalid as exc:
        raise ReservationRefused(400, _invalid("CREATE", agent, exc)) from None
    _free_on_agent(m, agent, before)
    m.convert_resources(agent.id, before, after)
    m.schedule_allocation()


def destroy_volumes(m: Master, body: JsonDict) -> None:
    """DESTROY_VOLUMES: turn persistent volumes back into reserved disk; the agent removes their data."""
    agent = _agent(m, body)
    try:
        before, after = destroy(body.get("volumes"))
        conflict = volume_conflict("DESTROY", before, agent.total, _in_use(agent))
        if conflict:
            raise OperationInvalid(conflict)
    except OperationInvalid as exc:
        raise ReservationRefused(400, f"Invalid DESTROY operation: {exc}") from None
    _free_on_agent(m, agent, before)
    m.convert_resources(agent.id, before, after)
    m.schedule_allocation()


def _in_use(agent: AgentRec) -> Resources:
    return sum((t.resources for t in agent.tasks.values()), Resources())


def _agent(m: Master, body: JsonDict) -> AgentRec:
    agent = m.agent_registry.agents.get(value(body.get("agent_id")) or "")
    if agent is None:
        raise ReservationRefused(400, "No agent found with specified ID")
    return agent


def _invalid(kind: str, agent: AgentRec, exc: OperationInvalid) -> str:
    return f"Invalid {kind} operation on agent {agent.id} at {agent.pid} ({agent.hostname}): {exc}"


def _free_on_agent(m: Master, agent: AgentRec, wanted: Resources) -> None:
    """Make `wanted` free on the agent, rescinding its outstanding offers when they hold part of it;
    409 with what there is when it is not there (in use by tasks, or never was)."""
    free = m.allocator.free(agent.id)
    if free.contains(wanted):
        return
    offered = sum((m.offers[o].resources for o in agent.offers if o in m.offers), Resources())
    if not (free + offered).contains(wanted):
        raise ReservationRefused(409, f"{free + offered} does not contain {wanted}")
    for offer_id in list(agent.offers):
        m.remove_offer(offer_id, rescind=True, recover=True)
