"""avmesos-cli's `mesos task attach --no-stdin`, as shipped, to a running Docker task on a secure cluster: the
agent follows the task's container through the engine (`docker attach` to its stdout and stderr), from the
attach to the task's end; the CLI authenticates with the cluster's credential. (A process task:
tests/compat/test_task_attach.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.compat.client_scenarios import CLIENTS, installed
from tests.compat.test_task_attach import TICKER, assert_attached_output
from tests.support.cli_targets import MESOS_CLI, cli_env, docker_agent
from tests.support.mesos_framework import task_info
from tests.support.on_a_terminal import run_on_a_terminal

TINY = "scylla-tiny:latest"   # runs as 65534 (its Dockerfile's USER)


def test_task_attach_follows_a_docker_tasks_output_until_it_ends(docker_client, tmp_path: Path) -> None:
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    with docker_agent(docker_client, tmp_path, "attach") as (m, framework, secure, _):
        offer = framework.take_offer(cpus=0.5, mem=128)
        task = task_info(offer["agent_id"], command=TICKER, image=TINY)
        framework.launch(offer, [task])
        framework.wait_state(task["task_id"]["value"], "TASK_RUNNING", timeout=60)
        container_id = _container_id(m, task["task_id"]["value"])
        anonymous = requests.post(f"http://{m.agent_addresses[0]}/api/v1", json={
            "type": "ATTACH_CONTAINER_OUTPUT", "attach_container_output": {"container_id": container_id}},
            headers={"Accept": "application/recordio"}, timeout=10)
        assert anonymous.status_code == 401, anonymous.text   # a task's output is not for anyone
        done = run_on_a_terminal([MESOS_CLI, "task", "attach", "--no-stdin", task["task_id"]["value"]],
                                 cli_env(secure), rows=24, columns=80)
        assert_attached_output(done.shown.decode(errors="replace"), done.returncode)
        framework.wait_state(task["task_id"]["value"], "TASK_FINISHED", timeout=60)


def _container_id(m: EmbeddedMesos, task_id: str) -> dict[str, Any]:
    principal, secret = m.http_auth
    state = requests.get(f"http://{m.agent_addresses[0]}/state", auth=(principal, secret), timeout=10).json()
    task = next(t for f in state["frameworks"] for e in f["executors"] for t in e["tasks"] if t["id"] == task_id)
    return task["statuses"][0]["container_status"]["container_id"]
