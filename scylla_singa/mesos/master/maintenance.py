"""Maintenance: the operator's schedule of machines going down, as Mesos's maintenance primitives. Pure.

A machine (MachineID: hostname and/or IP) is UP, DRAINING (in a window of
the schedule: its agents' offers carry the window's `unavailability`, and
frameworks with tasks there get inverse offers to answer) or DOWN (after
START_MAINTENANCE: its agents are removed and may not register until
STOP_MAINTENANCE, which also takes it out of the schedule).

Here: the schedule and the machines' modes, the checks of each call with
Mesos's texts, and which machine an agent is on. The master (master_core,
maintenance_calls) does what a change means for agents and frameworks.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

JsonDict = dict[str, Any]
MachineKey = tuple[str, str]   # (hostname in lower case, ip); either may be ""


class MaintenanceInvalid(ValueError):
    """A maintenance call refused (400 with this text)."""


def machine_key(machine_id: Mapping[str, Any]) -> MachineKey:
    return (str(machine_id.get("hostname") or "").lower(), str(machine_id.get("ip") or ""))


def show(machine_id: Mapping[str, Any]) -> str:
    """A MachineID as Mesos prints it in its messages (its JSON)."""
    return json.dumps({k: machine_id[k] for k in ("hostname", "ip") if machine_id.get(k)}, separators=(",", ":"))


def check_machine(machine_id: Any) -> MachineKey:
    if not isinstance(machine_id, Mapping) or not (machine_id.get("hostname") or machine_id.get("ip")):
        raise MaintenanceInvalid("Both 'hostname' and 'ip' for a machine are empty")
    if machine_id.get("ip"):
        try:
            ipaddress.ip_address(str(machine_id["ip"]))
        except ValueError:
            raise MaintenanceInvalid(f"Failed to parse IPv4: {machine_id['ip']}") from None
    return machine_key(machine_id)


def check_machines(machine_ids: Any) -> list[MachineKey]:
    """START/STOP_MAINTENANCE's list: not empty, each machine valid and named once."""
    if not machine_ids:
        raise MaintenanceInvalid("List of machines is empty")
    keys: list[MachineKey] = []
    for machine_id in machine_ids:
        key = check_machine(machine_id)
        if key in keys:
            raise MaintenanceInvalid(f"Machine '{show(machine_id)}' appears more than once in the schedule")
        keys.append(key)
    return keys


def _nanos(duration: Any) -> int | None:
    if not isinstance(duration, Mapping) or isinstance(duration.get("nanoseconds"), bool):
        return None
    try:
        return int(duration["nanoseconds"])
    except (KeyError, TypeError, ValueError):
        return None


def _normal(window: Mapping[str, Any]) -> JsonDict:
    """A checked window with its times as integers (a protobuf call's JSON form writes int64 as text)."""
    given = window["unavailability"]
    unavailability: JsonDict = {"start": {"nanoseconds": _nanos(given["start"])}}
    if "duration" in given:
        unavailability["duration"] = {"nanoseconds": _nanos(given["duration"])}
    machines = [{k: str(m[k]) for k in ("hostname", "ip") if m.get(k)} for m in window["machine_ids"]]
    return {"machine_ids": machines, "unavailability": unavailability}


@dataclass
class Maintenance:
    """The schedule (windows as given), the machines that are DOWN, and the frameworks' answers to the
    inverse offers of each DRAINING machine."""

    windows: list[JsonDict] = field(default_factory=list)
    down: dict[MachineKey, JsonDict] = field(default_factory=dict)   # key -> its MachineID
    statuses: dict[MachineKey, dict[str, JsonDict]] = field(default_factory=dict)   # key -> fw id -> status

    @property
    def active(self) -> bool:
        return bool(self.windows)

    def scheduled(self) -> dict[MachineKey, tuple[JsonDict, JsonDict]]:
        """Every machine in the schedule: its MachineID and its window's unavailability."""
        return {machine_key(m): (m, w["unavailability"]) for w in self.windows for m in w["machine_ids"]}

    def mode(self, key: MachineKey) -> str:
        if key in self.down:
            return "DOWN"
        return "DRAINING" if key in self.scheduled() else "UP"

    def check_schedule(self, schedule: Any) -> list[JsonDict]:
        """A new schedule's windows, checked as Mesos checks them: each window has machines and a start,
        no negative duration, no machine twice, and no DOWN machine left out."""
        windows = (schedule or {}).get("windows") or [] if isinstance(schedule, Mapping) else None
        if windows is None:
            raise MaintenanceInvalid("A schedule is an object with a list of 'windows'")
        seen: set[MachineKey] = set()
        for window in windows:
            machines = window.get("machine_ids") if isinstance(window, Mapping) else None
            if not machines:
                raise MaintenanceInvalid("List of machines in the maintenance window is empty")
            unavailability = window.get("unavailability")
            if not isinstance(unavailability, Mapping) or _nanos(unavailability.get("start")) is None:
                raise MaintenanceInvalid("Unavailability 'start' must be set to a time in nanoseconds")
            if "duration" in unavailability and (_nanos(unavailability["duration"]) is None
                                                 or _nanos(unavailability["duration"]) < 0):
                raise MaintenanceInvalid("Unavailability 'duration' is negative")
            for machine_id in machines:
                key = check_machine(machine_id)
                if key in seen:
                    raise MaintenanceInvalid(f"Machine '{show(machine_id)}' appears more than once in the "
                                             "schedule")
                seen.add(key)
        for key, machine_id in self.down.items():
            if key not in seen:
                raise MaintenanceInvalid(f"Machine '{show(machine_id)}' is deactivated and cannot be removed from "
                                         "the schedule")
        return [_normal(w) for w in windows]

    def set_schedule(self, windows: list[JsonDict]) -> set[MachineKey]:
        """Take a checked schedule; the machines whose window changed (added, removed or moved)."""
        before = self.scheduled()
        self.windows = windows
        after = self.scheduled()
        changed = {k for k in before.keys() | after.keys()
                   if k not in before or k not in after or before[k][1] != after[k][1]}
        for key in changed:
            self.statuses.pop(key, None)
        return changed

    def start(self, machine_ids: Iterable[JsonDict]) -> list[MachineKey]:
        """START_MAINTENANCE: DRAINING machines go DOWN."""
        machine_ids = list(machine_ids or [])
        keys = check_machines(machine_ids)
        scheduled = self.scheduled()
        for key, machine_id in zip(keys, machine_ids):
            if key not in scheduled:
                raise MaintenanceInvalid(f"Machine '{show(machine_id)}' is not part of a maintenance schedule")
            if key in self.down:
                raise MaintenanceInvalid(f"Machine '{show(machine_id)}' is not in DRAINING mode and cannot be "
                                         "brought down")
        for key, machine_id in zip(keys, machine_ids):
            self.down[key] = dict(machine_id)
            self.statuses.pop(key, None)
        return keys

    def stop(self, machine_ids: Iterable[JsonDict]) -> list[MachineKey]:
        """STOP_MAINTENANCE: DOWN machines come UP and leave the schedule (windows left empty go too)."""
        machine_ids = list(machine_ids or [])
        keys = check_machines(machine_ids)
        for key, machine_id in zip(keys, machine_ids):
            if key not in self.down:
                raise MaintenanceInvalid(f"Machine '{show(machine_id)}' is not in DOWN mode and cannot be "
                                         "brought up")
        for key in keys:
            del self.down[key]
        windows = []
        for window in self.windows:
            rest = [m for m in window["machine_ids"] if machine_key(m) not in keys]
            if rest:
                windows.append({**window, "machine_ids": rest})
        self.windows = windows
        return keys

    def machine_of(self, hostname: str, ip: str) -> MachineKey | None:
        """The scheduled or DOWN machine an agent (its hostname and IP) is on, if any: every field the
        MachineID gives must match."""
        for key in list(self.scheduled()) + list(self.down):
            name, address = key
            if (not name or name == hostname.lower()) and (not address or address == ip):
                return key
        return None

    def unavailability_of(self, hostname: str, ip: str) -> JsonDict | None:
        """The unavailability of the DRAINING machine an agent is on (None: it is on none)."""
        key = self.machine_of(hostname, ip)
        if key is None or key in self.down:
            return None
        return self.scheduled()[key][1]

    def record(self, key: MachineKey, framework_id: str, status: str) -> None:
        """A framework's answer to (or, UNKNOWN, its pending) inverse offer for a machine."""
        self.statuses.setdefault(key, {})[framework_id] = {
            "status": status, "framework_id": {"value": framework_id}, "timestamp": {"nanoseconds": time.time_ns()}}

    def status(self) -> JsonDict:
        """GET_MAINTENANCE_STATUS's ClusterStatus."""
        draining = [{"id": machine_id, "statuses": list(self.statuses.get(key, {}).values())}
                    for key, (machine_id, _) in self.scheduled().items() if key not in self.down]
        out: JsonDict = {}
        if draining:   # Mesos leaves empty lists out
            out["draining_machines"] = draining
        if self.down:
            out["down_machines"] = list(self.down.values())
        return out
