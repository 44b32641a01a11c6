"""Inverse offers: the master asking frameworks to give an agent back before its machine's maintenance.

A collaborator of `master_core.Master`, the framework-facing half of
maintenance.py. After each allocation round, while a schedule exists, every
framework with tasks on an agent of a DRAINING machine gets one inverse
offer for that agent (INVERSE_OFFERS event, with the window's
unavailability); ACCEPT_INVERSE_OFFERS / DECLINE_INVERSE_OFFERS record its
answer, which GET_MAINTENANCE_STATUS shows. One inverse offer per framework
and agent while the window stands (Mesos sends it again once the answer's
filter expires). When the machine's window changes or it goes DOWN, what is
outstanding is rescinded (RESCIND_INVERSE_OFFER).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.fields import value
from .maintenance import MachineKey

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import FrameworkRec


@dataclass(frozen=True)
class InverseOfferRec:
    id: str
    framework_id: str
    agent_id: str
    machine: MachineKey


class InverseOffers:
    """The outstanding inverse offers, and which (framework, agent) pairs were asked already."""

    def __init__(self, master: Master) -> None:
        self.m = master
        self.outstanding: dict[str, InverseOfferRec] = {}
        self.asked: set[tuple[str, str, MachineKey]] = set()

    def send(self) -> None:
        """Ask every framework with tasks on an agent of a DRAINING machine, once per agent."""
        maintenance = self.m.maintenance
        by_fw: dict[str, list[dict[str, Any]]] = {}
        for agent in self.m.agent_registry.agents.values():
            machine = maintenance.machine_of(agent.hostname, agent.ip)
            unavailability = maintenance.unavailability_of(agent.hostname, agent.ip)
            if machine is None or unavailability is None:
                continue
            for fw_id in sorted({t.framework_id for t in agent.tasks.values()}):
                fw = self.m.frameworks.get(fw_id)
                if fw is None or fw.stream is None or (fw_id, agent.id, machine) in self.asked:
                    continue
                rec = InverseOfferRec(self.m.next_id("O"), fw_id, agent.id, machine)
                self.outstanding[rec.id] = rec
                self.asked.add((fw_id, agent.id, machine))
                maintenance.record(machine, fw_id, "UNKNOWN")
                event: dict[str, Any] = {"id": {"value": rec.id}, "framework_id": {"value": fw_id},
                                         "agent_id": {"value": agent.id}, "unavailability": unavailability}
                if agent.url():
                    event["url"] = agent.url()
                by_fw.setdefault(fw_id, []).append(event)
        for fw_id, events in by_fw.items():
            self.m.frameworks[fw_id].stream.send({"type": "INVERSE_OFFERS",
                                                  "inverse_offers": {"inverse_offers": events}})

    def answer(self, fw: FrameworkRec, body: dict[str, Any], status: str) -> None:
        """ACCEPT_INVERSE_OFFERS (status ACCEPT) or DECLINE_INVERSE_OFFERS (DECLINE) of this framework's own."""
        for given in body.get("inverse_offer_ids") or ():
            rec = self.outstanding.get(value(given) or "")
            if rec is not None and rec.framework_id == fw.id:
                del self.outstanding[rec.id]
                self.m.maintenance.record(rec.machine, fw.id, status)

    def rescind(self, machines: set[MachineKey]) -> None:
        """The machines' windows changed or they went DOWN: rescind their outstanding inverse offers and
        forget whom they asked (a new window asks again)."""
        for rec in [r for r in self.outstanding.values() if r.machine in machines]:
            del self.outstanding[rec.id]
            fw = self.m.frameworks.get(rec.framework_id)
            if fw is not None and fw.stream is not None:
                fw.stream.send({"type": "RESCIND_INVERSE_OFFER",
                                "rescind_inverse_offer": {"inverse_offer_id": {"value": rec.id}}})
        self.asked = {a for a in self.asked if a[2] not in machines}
