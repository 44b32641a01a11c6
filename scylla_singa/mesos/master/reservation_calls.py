"""The operator API's RESERVE/UNRESERVE_RESOURCES, CREATE/DESTROY_VOLUMES and GROW/SHRINK_VOLUME on the master, with Mesos 1.12's
answers (a refusal is a CallError with Mesos's status and text). The
master's ACLs are asked first (acls.py: reserve_resources, ...; 403 when
they refuse, as Mesos answers an unauthorized operator).

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
from .master_records import AgentRec, CallError
from .reservation_ops import OperationInvalid, conversion

JsonDict = dict[str, Any]


def reserve_resources(m: Master, body: JsonDict, principal: str | None) -> None:
    """RESERVE_RESOURCES: reserve an agent's unreserved resources for a role."""
    _apply(m, body, "RESERVE", principal)


def unreserve_resources(m: Master, body: JsonDict, principal: str | None) -> None:
    """UNRESERVE_RESOURCES: give an agent's dynamically reserved resources back to every role."""
    _apply(m, body, "UNRESERVE", principal)


def create_volumes(m: Master, body: JsonDict, principal: str | None) -> None:
    """CREATE_VOLUMES: make persistent volumes of an agent's reserved disk."""
    _apply(m, body, "CREATE", principal)


def destroy_volumes(m: Master, body: JsonDict, principal: str | None) -> None:
    """DESTROY_VOLUMES: turn persistent volumes back into reserved disk; the agent removes their data."""
    _apply(m, body, "DESTROY", principal)


def grow_volume(m: Master, body: JsonDict, principal: str | None) -> None:
    """GROW_VOLUME: add reserved disk of the volume's reservation to a persistent volume."""
    _apply(m, body, "GROW_VOLUME", principal)


def shrink_volume(m: Master, body: JsonDict, principal: str | None) -> None:
    """SHRINK_VOLUME: give part of a persistent volume back as reserved disk."""
    _apply(m, body, "SHRINK_VOLUME", principal)


def _apply(m: Master, body: JsonDict, kind: str, principal: str | None) -> None:
    refused = None if m.cfg.acls is None else m.cfg.acls.operation_refusal(kind, body, principal)
    if refused is not None:
        raise CallError(403, refused)
    agent = m.agent_registry.agents.get(value(body.get("agent_id")) or "")
    if agent is None:
        raise CallError(400, "No agent found with specified ID")
    try:
        before, after = conversion(kind, body, principal, None, agent.total, agent.used())
    except OperationInvalid as exc:
        # as Mesos words them: UNRESERVE and DESTROY do not name the agent, the others do
        where = "" if kind in ("UNRESERVE", "DESTROY") else f" on agent {agent.id} at {agent.pid} ({agent.hostname})"
        raise CallError(400, f"Invalid {kind} operation{where}: {exc}") from None
    _free_on_agent(m, agent, before)
    m.convert_resources(agent.id, before, after)
    m.operation_feedback.applied_without_feedback(kind)
    m.schedule_allocation()


def _free_on_agent(m: Master, agent: AgentRec, wanted: Resources) -> None:
    """Make `wanted` free on the agent, rescinding its outstanding offers when they hold part of it;
    409 with what there is when it is not there (in use by tasks, or never was)."""
    free = m.allocator.free(agent.id)
    if free.contains(wanted):
        return
    offered = sum((m.offers[o].resources for o in agent.offers if o in m.offers), Resources())
    if not (free + offered).contains(wanted):
        raise CallError(409, f"{free + offered} does not contain {wanted}")
    for offer_id in list(agent.offers):
        m.remove_offer(offer_id, rescind=True, recover=True)
