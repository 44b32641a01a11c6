"""The agent's executor API on a secure agent: only an executor's own token speaks for its tasks."""

from __future__ import annotations

from pathlib import Path

import requests

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.security.agent_fixtures import frameworks, process_cluster  # noqa: F401 - fixtures
from tests.support import v1_executor
from tests.support.mesos_framework import task_info

EXECUTOR = {"type": "CUSTOM", "executor_id": {"value": "tokened"}, "name": "tokened",
            "command": {"value": f"python3 {Path(v1_executor.__file__)}", "shell": True},
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}},
                          {"name": "mem", "type": "SCALAR", "scalar": {"value": 32}}]}


def test_a_forged_executor_update_is_refused_and_the_real_executor_works(process_cluster: EmbeddedMesos,
                                                                          frameworks) -> None:
    """Attack: POST an UPDATE (TASK_FINISHED) to the agent's /api/v1/executor for a running custom executor's
    task, knowing its framework and executor ids (both in /state), to end it in the framework's eyes."""
    fw = frameworks(process_cluster.master_address, user="nobody")
    offer = fw.take_offer()
    task = task_info(offer["agent_id"])
    del task["command"]
    task["executor"] = EXECUTOR
    tid = task["task_id"]["value"]
    fw.launch(offer, [task])
    fw.wait_state(tid, "TASK_RUNNING", timeout=30)   # the executor subscribed and updated with its token
    forged = {"type": "UPDATE", "framework_id": {"value": fw.id}, "executor_id": {"value": "tokened"},
              "update": {"status": {"task_id": {"value": tid}, "state": "TASK_FINISHED", "source": "SOURCE_EXECUTOR",
                                    "uuid": "Zm9yZ2VkMTIzNDU2Nzg5MA==", "executor_id": {"value": "tokened"}}}}
    url = f"http://{process_cluster.agent_addresses[0]}/api/v1/executor"
    for headers in ({}, {"Authorization": "Bearer guessed"}):
        r = requests.post(url, json=forged, headers=headers, timeout=10)
        assert r.status_code == 401 and "carry its token" in r.text, (headers, r.status_code, r.text)
    assert fw.sched.states(tid)[-1] == "TASK_RUNNING" and "TASK_FINISHED" not in fw.sched.states(tid)
    fw.driver.killTask(task["task_id"])
    fw.wait_state(tid, "TASK_KILLED", timeout=30)   # and the real executor still answers its KILL
