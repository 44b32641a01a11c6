"""avmesos-cli's `mesos task attach --no-stdin`, as shipped, to a running Docker task on a secure cluster: the
agent follows the task's container through the engine (`docker attach` to its stdout and stderr), from the
attach to the task's end; the CLI authenticates with the cluster's credential. (A process task:
tests/compat/test_task_attach.py.)"""

from __future__ import annotations

import os
from typing import Any

import pytest
import requests

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.compat.client_scenarios import CLIENTS, installed
from tests.compat.test_task_attach import TICKER, assert_attached_output
from tests.support.mesos_framework import TestFramework, task_info
from tests.support.on_a_terminal import run_on_a_terminal

TINY = "scylla-tiny:latest"   # runs as 65534 (its Dockerfile's USER)


def test_task_attach_follows_a_docker_tasks_output_until_it_ends(docker_client, tmp_path) -> None:
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    m = EmbeddedMesos([{"resources": "cpus:4;mem:4096;ports:[31000-31100]", "hostname": "attach"}],
                      docker_client=docker_client, allocation_interval=0.2, retry_interval=0.5)
    with m:
        framework = TestFramework(m.master_address, name="attach-docker", credential=m.framework_credential).start()
        try:
            principal, secret = m.http_auth
            config = tmp_path / "secure.toml"
            config.write_text(f'[master]\naddress = "{m.master_address}"\nprincipal = "{principal}"\n'
                              f'secret = "{secret}"\n[agent]\nprincipal = "{principal}"\nsecret = "{secret}"\n')
            env = {**os.environ, "MESOS_CLI_CONFIG": str(config),
                   "PATH": f"{CLIENTS / 'venv' / 'bin'}:{os.environ['PATH']}"}
            offer = framework.take_offer(cpus=0.5, mem=128)
            task = task_info(offer["agent_id"], command=TICKER, image=TINY)
            framework.launch(offer, [task])
            framework.wait_state(task["task_id"]["value"], "TASK_RUNNING", timeout=60)
            container_id = _container_id(m, task["task_id"]["value"])
            anonymous = requests.post(f"http://{m.agent_addresses[0]}/api/v1", json={
                "type": "ATTACH_CONTAINER_OUTPUT", "attach_container_output": {"container_id": container_id}},
                headers={"Accept": "application/recordio"}, timeout=10)
            assert anonymous.status_code == 401, anonymous.text   # a task's output is not for anyone
            done = run_on_a_terminal([str(CLIENTS / "venv" / "bin" / "mesos-cli"), "task", "attach", "--no-stdin",
                                      task["task_id"]["value"]], env, rows=24, columns=80)
            assert_attached_output(done.shown.decode(errors="replace"), done.returncode)
            framework.wait_state(task["task_id"]["value"], "TASK_FINISHED", timeout=60)
        finally:
            framework.stop()


def _container_id(m: EmbeddedMesos, task_id: str) -> dict[str, Any]:
    principal, secret = m.http_auth
    state = requests.get(f"http://{m.agent_addresses[0]}/state", auth=(principal, secret), timeout=10).json()
    task = next(t for f in state["frameworks"] for e in f["executors"] for t in e["tasks"] if t["id"] == task_id)
    return task["statuses"][0]["container_status"]["container_id"]
