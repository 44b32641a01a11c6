"""What a launch takes from its offers when its tasks use a shared persistent volume: the volume once, however
many tasks use it (it stays in the offer for the next one), and never in an executor's resources, as Mesos
refuses it there. Through the master: tests/mesos/test_reservations.py (two tasks at once on a real agent)."""

from __future__ import annotations

from typing import Any

import pytest

from scylla_singa.mesos.api.resources import Resources
from scylla_singa.mesos.master.launch_validation import Launch, LaunchInvalid, check_launch
from scylla_singa.mesos.master.master_records import FrameworkRec
from scylla_singa.mesos.master.registration_lifecycles import FrameworkLifecycle

DISK = {"name": "disk", "type": "SCALAR", "scalar": {"value": 64}, "reservations": [{"type": "DYNAMIC", "role": "ml"}],
        "disk": {"persistence": {"id": "s1"}, "volume": {"mode": "RW", "container_path": "s"}}, "shared": {}}
CPUS = {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1}, "reservations": [{"type": "DYNAMIC", "role": "ml"}]}


def _task(task_id: str, **more: Any) -> dict[str, Any]:
    return {"task_id": {"value": task_id}, "name": task_id, "resources": [DISK, CPUS], **more}


def test_a_shared_volume_is_taken_once_however_many_tasks_use_it() -> None:
    need = Resources.from_json([DISK, CPUS])
    launch = Launch([({}, need), ({}, need)], None, Resources())
    assert launch.taken == Resources.from_json([DISK, CPUS, CPUS])
    assert launch.total.without_shared() == Resources.from_json([CPUS, CPUS])


def test_an_executor_may_not_hold_a_shared_volume() -> None:
    fw = FrameworkRec("fw1", {"name": "f", "user": "u", "role": "ml"}, "ml", FrameworkLifecycle("NEW", "f"), 0.0)
    executor = {"executor_id": {"value": "e1"}, "command": {"value": "run"}, "resources": [DISK]}
    offered = Resources.from_json([DISK, CPUS, CPUS])
    with pytest.raises(LaunchInvalid, match="should not contain any shared resources"):
        check_launch(fw, [_task("t1", executor=executor)], None, "a1", offered, "ml")
    assert check_launch(fw, [_task("t2", command={"value": "true"})], None, "a1", offered, "ml").taken == \
        Resources.from_json([DISK, CPUS])
