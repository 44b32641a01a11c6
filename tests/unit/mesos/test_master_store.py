"""What the master's store keeps of what operators set (weights, quotas, the maintenance schedule and its DOWN
machines), read back by a new store on the same work dir, and what it skips when a stored entry would not pass
its call's checks (the file edited by hand, or written by another version)."""

from __future__ import annotations

import json
from pathlib import Path

from scylla_singa.mesos.master.maintenance import Maintenance
from scylla_singa.mesos.master.master_store import MasterStore
from scylla_singa.mesos.master.quota import Quota

WINDOW = {"machine_ids": [{"hostname": "h1", "ip": "10.0.0.1"}, {"hostname": "h2"}],
          "unavailability": {"start": {"nanoseconds": 1_000_000_000}, "duration": {"nanoseconds": 3_600_000_000_000}}}


def test_what_operators_set_is_read_back_by_the_next_master(tmp_path: Path) -> None:
    store = MasterStore(tmp_path)
    maintenance = Maintenance()
    maintenance.set_schedule(maintenance.check_schedule({"windows": [WINDOW]}))
    maintenance.start([{"hostname": "h2"}])
    quotas = {"ml": Quota({"cpus": 2.0}, {"cpus": 4.0, "mem": 1024.0}), "web": Quota()}
    store.put_operator_settings({"ml": 2.5}, quotas, maintenance)

    again = MasterStore(tmp_path)
    assert again.weights == {"ml": 2.5}
    assert again.quotas == quotas
    assert again.maintenance.windows == maintenance.windows
    assert again.maintenance.mode(("h2", "")) == "DOWN" and again.maintenance.mode(("h1", "10.0.0.1")) == "DRAINING"


def test_entries_that_would_not_pass_their_calls_checks_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "master.json").write_text(json.dumps({
        "frameworks": {},
        "weights": {"ml": 2.0, "bad": -1, "worse": "x", "": 1.0},
        "quotas": [{"role": "ml", "guarantees": {"cpus": {"value": 1}}},
                   {"role": "ml/nested/", "limits": {}}, "not a config",
                   {"role": "greedy", "guarantees": {"cpus": {"value": 5}}, "limits": {"cpus": {"value": 1}}}],
        "maintenance": {"windows": [WINDOW], "down": [{"hostname": "nowhere"}]}}))
    store = MasterStore(tmp_path)
    assert store.weights == {"ml": 2.0}
    assert store.quotas == {"ml": Quota({"cpus": 1.0})}
    # a DOWN machine outside the schedule breaks the schedule's rule: the maintenance part is left out whole
    assert store.maintenance.windows == [] and store.maintenance.down == {}


def test_a_store_without_operator_settings_starts_with_none(tmp_path: Path) -> None:
    (tmp_path / "master.json").write_text(json.dumps({"frameworks": {}}))
    store = MasterStore(tmp_path)
    assert (store.weights, store.quotas, store.maintenance.windows) == ({}, {}, [])
