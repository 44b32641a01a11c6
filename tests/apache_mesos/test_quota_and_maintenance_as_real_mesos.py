"""Quota and maintenance calls, the same sequence against a live Apache Mesos 1.12 master and ours (no agents
on either): every answer, status and body, must be the same.

Left out, because Apache Mesos 1.12's master aborts on them (`unordered_map::at`; found here): REMOVE_QUOTA of a
role without quota, and UPDATE_QUOTA for the role "*". Ours answers both 400 (tests/mesos/test_quota.py,
tests/unit/mesos/test_quota.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from scylla_singa.mesos.embedded import EmbeddedMesos

from .real_mesos import MesosProcess

MACHINE = {"hostname": "h1", "ip": "10.0.0.1"}


def _config(role: str, guarantees: dict | None = None, limits: dict | None = None) -> dict[str, Any]:
    return {"role": role, "guarantees": {k: {"value": v} for k, v in (guarantees or {}).items()},
            "limits": {k: {"value": v} for k, v in (limits or {}).items()}}


def _quota(*configs: dict[str, Any]) -> dict[str, Any]:
    return {"type": "UPDATE_QUOTA", "update_quota": {"quota_configs": list(configs)}}


def _window(machines: list[dict], start: int = 1, duration: int | None = None) -> dict[str, Any]:
    unavailability: dict[str, Any] = {"start": {"nanoseconds": start}}
    if duration is not None:
        unavailability["duration"] = {"nanoseconds": duration}
    return {"machine_ids": machines, "unavailability": unavailability}


def _schedule(*windows: dict[str, Any]) -> dict[str, Any]:
    return {"type": "UPDATE_MAINTENANCE_SCHEDULE", "update_maintenance_schedule": {"schedule": {
        "windows": list(windows)}}}


def _machines(kind: str, machines: list[dict]) -> dict[str, Any]:
    return {"type": kind, kind.lower(): {"machines": machines}}


LEGACY = {"type": "SET_QUOTA", "set_quota": {"quota_request": {"force": True, "role": "legacy", "guarantee": [
    {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}}]}}}

SEQUENCE = [
    ("guarantee beyond limit", _quota(_config("a", {"cpus": 5}, {"cpus": 2}))),
    ("nested role", _quota(_config("eng/ml", limits={"cpus": 1}))),
    ("guarantees beyond capacity", _quota(_config("big", guarantees={"cpus": 9}))),
    ("a limit", _quota(_config("lim", limits={"cpus": 3, "mem": 512}))),
    ("the quota", {"type": "GET_QUOTA"}),
    ("legacy set", LEGACY),
    ("legacy set again", LEGACY),
    ("legacy remove", {"type": "REMOVE_QUOTA", "remove_quota": {"role": "legacy"}}),
    ("quota back to none", _quota(_config("lim"))),
    ("no quota", {"type": "GET_QUOTA"}),
    ("start unscheduled", _machines("START_MAINTENANCE", [MACHINE])),
    ("start empty machine", _machines("START_MAINTENANCE", [{}])),
    ("start no machines", _machines("START_MAINTENANCE", [])),
    ("window without machines", _schedule(_window([]))),
    ("machine twice", _schedule(_window([MACHINE]), _window([MACHINE], 2))),
    ("negative duration", _schedule(_window([MACHINE], 1, -5))),
    ("bad ip", _schedule(_window([{"ip": "nope"}]))),
    ("a schedule", _schedule(_window([MACHINE], 10 ** 18, 10 ** 9))),
    ("the schedule", {"type": "GET_MAINTENANCE_SCHEDULE"}),
    ("stop a draining machine", _machines("STOP_MAINTENANCE", [MACHINE])),
    ("start", _machines("START_MAINTENANCE", [MACHINE])),
    ("status with a machine down", {"type": "GET_MAINTENANCE_STATUS"}),
    ("drop a down machine", _schedule()),
    ("stop", _machines("STOP_MAINTENANCE", [MACHINE])),
    ("status after", {"type": "GET_MAINTENANCE_STATUS"}),
    ("weights", {"type": "UPDATE_WEIGHTS", "update_weights": {"weight_infos": [{"role": "a", "weight": 2.0}]}}),
]


@pytest.fixture(scope="module")
def our_master(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMesos]:
    home = os.environ.get("SCYLLA_HOME")
    os.environ["SCYLLA_HOME"] = str(tmp_path_factory.mktemp("home"))
    # insecure like the real master of these tests (started without HTTP authentication)
    master = EmbeddedMesos(0, simulate=True, insecure=True).start()
    yield master
    master.stop()
    if home is None:
        os.environ.pop("SCYLLA_HOME", None)
    else:
        os.environ["SCYLLA_HOME"] = home


def test_the_same_calls_get_the_same_answers(real_master: MesosProcess, our_master: EmbeddedMesos) -> None:
    differences = []
    for name, body in SEQUENCE:
        answers = []
        for address in (real_master.address, our_master.master_address):
            got = requests.post(f"http://{address}/api/v1", json=body, headers={"Accept": "application/json"},
                                timeout=10)
            answers.append((got.status_code, got.text))
        if answers[0] != answers[1]:
            differences.append(f"{name}: Apache Mesos {answers[0]}, ours {answers[1]}")
    assert not differences, "\n".join(differences)
