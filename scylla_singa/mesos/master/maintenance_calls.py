"""The operator API's maintenance calls on the master: UPDATE_MAINTENANCE_SCHEDULE, START_MAINTENANCE,
STOP_MAINTENANCE, GET_MAINTENANCE_SCHEDULE and GET_MAINTENANCE_STATUS (also the v0 `GET
/maintenance/schedule` and `GET /maintenance/status`), with Mesos's checks and texts (maintenance.py).

What a change means here: a machine whose window changed has its agents'
offers rescinded (offered again with, or without, the unavailability) and
its outstanding inverse offers rescinded; a machine that goes DOWN has its
agents removed (their tasks are lost, the agents told to kill them) and may
not register agents until STOP_MAINTENANCE. The schedule and the DOWN
machines are kept in the master's store with its quotas and weights
(master_store.py), so a restarted master keeps them, as Mesos's registry
does.
"""

from __future__ import annotations

from typing import Any

from .maintenance import MachineKey
from .master_core import Master

JsonDict = dict[str, Any]
DOWN_MESSAGE = "removed: Operator initiated 'Machine DOWN'"


def update_schedule(m: Master, body: JsonDict) -> None:
    windows = m.maintenance.check_schedule(body.get("schedule"))
    changed = m.maintenance.set_schedule(windows)
    m.save_operator_settings()
    _machines_changed(m, changed)


def start_maintenance(m: Master, body: JsonDict) -> None:
    keys = set(m.maintenance.start(body.get("machines")))
    m.save_operator_settings()
    m.inverse_offers.rescind(keys)
    for agent in list(m.agent_registry.agents.values()):
        if m.maintenance.machine_of(agent.hostname, agent.ip) in keys:
            m.agent_registry.mark_gone(agent, DOWN_MESSAGE)


def stop_maintenance(m: Master, body: JsonDict) -> None:
    m.maintenance.stop(body.get("machines"))
    m.save_operator_settings()


def _machines_changed(m: Master, keys: set[MachineKey]) -> None:
    """Offers of the machines' agents carry the old unavailability (or none): rescind them, so they come
    again as they now are; and rescind the machines' inverse offers (asked again under the new window)."""
    if not keys:
        return
    m.inverse_offers.rescind(keys)
    for offer in list(m.offers.values()):
        agent = m.agent_registry.agents.get(offer.agent_id)
        if agent is not None and _on(agent, keys):
            m.remove_offer(offer.id)
    m.schedule_allocation()


def _on(agent: Any, keys: set[MachineKey]) -> bool:
    """Whether the agent is on one of these machines (every field their MachineIDs give matches)."""
    for name, address in keys:
        if (not name or name == agent.hostname.lower()) and (not address or address == agent.ip):
            return True
    return False

