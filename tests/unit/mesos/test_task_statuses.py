"""A task's `statuses` in the master's views: one entry per state change, as Mesos's master keeps them (an
update of the state the last entry has replaces it: a status update the agent resent, a health change)."""

from __future__ import annotations

import pytest

from scylla_singa.mesos.api.resources import Resources
from scylla_singa.mesos.master.master_records import TaskRec


@pytest.mark.parametrize("states, kept", [
    (["TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"], ["TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"]),
    (["TASK_STARTING"] * 6, ["TASK_STARTING"]),
    (["TASK_STARTING", "TASK_RUNNING", "TASK_RUNNING", "TASK_KILLED"], ["TASK_STARTING", "TASK_RUNNING",
                                                                        "TASK_KILLED"]),
])
def test_a_task_keeps_one_status_per_state_change(states: list[str], kept: list[str]) -> None:
    task = TaskRec("fw", "t1", "a1", {}, Resources())
    for n, state in enumerate(states):
        task.record({"state": state, "timestamp": float(n)})
    assert [s["state"] for s in task.statuses] == kept
    assert task.statuses[-1]["timestamp"] == float(len(states) - 1)   # the latest of each kept
    assert task.state == states[-1]
