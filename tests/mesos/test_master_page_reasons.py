"""The master page shows why a task ended from the GET_TASKS view of the master, as it would on Apache Mesos."""

from __future__ import annotations

import requests

from scylla_singa.ui import master_page
from tests.support.mesos_framework import task_info


def test_a_failed_task_shows_its_reason_and_message_on_the_page(cluster, framework) -> None:
    m = cluster(1, master_routes=[master_page.routes])
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], cpus=1, mem=128, command="exit 3")
    f.launch(offer, [task])
    status = f.wait_state(task["task_id"]["value"], "TASK_FAILED")
    rows = requests.get(f"http://{m.master_address}/ui/state", timeout=10).json()["tasks"]
    (row,) = [r for r in rows if r["id"] == task["task_id"]["value"]]
    assert (row["state"], row["reason"], row["message"]) == ("TASK_FAILED", status["reason"], status["message"])
    assert row["message"] and row["reason"]
