"""avmesos-cli's `mesos task attach --no-stdin`, as shipped, to a running Docker task on a secure cluster: the
agent follows the task's container through the engine (`docker attach` to its stdout and stderr), from the
attach to the task's end; the CLI authenticates with the cluster's credential. (A process task:
tests/compat/test_task_attach.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.compat.client_scenarios import CLIENTS, installed
from tests.compat.test_task_attach import TICKER, assert_attached_output, assert_typed_into, TYPING_PROBE
from tests.support.cli_targets import MESOS_CLI, cli_env, docker_agent
from tests.support.mesos_framework import task_container_id, task_info
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
        container_id = task_container_id(m.agent_addresses[0], task["task_id"]["value"], m.http_auth)
        anonymous = requests.post(f"http://{m.agent_addresses[0]}/api/v1", json={
            "type": "ATTACH_CONTAINER_OUTPUT", "attach_container_output": {"container_id": container_id}},
            headers={"Accept": "application/recordio"}, timeout=10)
        assert anonymous.status_code == 401, anonymous.text   # a task's output is not for anyone
        done = run_on_a_terminal([MESOS_CLI, "task", "attach", "--no-stdin", task["task_id"]["value"]],
                                 cli_env(secure), rows=24, columns=80)
        assert_attached_output(done.shown.decode(errors="replace"), done.returncode)
        framework.wait_state(task["task_id"]["value"], "TASK_FINISHED", timeout=60)


def test_task_attach_types_into_a_mesos_container_with_an_image_on_a_terminal(docker_client, tmp_path: Path) -> None:
    """A MESOS container with a Docker image and tty_info runs in a container the engine gives a terminal; the
    CLI's typing reaches it through `docker attach` to its stdin, its resizes through the engine."""
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    with docker_agent(docker_client, tmp_path, "attach-tty") as (m, framework, secure, _):
        offer = framework.take_offer(cpus=0.5, mem=128)
        task = task_info(offer["agent_id"], command=TYPING_PROBE, extra={"container": {
            "type": "MESOS", "mesos": {"image": {"type": "DOCKER", "docker": {"name": TINY}}}, "tty_info": {}}})
        framework.launch(offer, [task])
        framework.wait_state(task["task_id"]["value"], "TASK_RUNNING", timeout=60)
        done = run_on_a_terminal([MESOS_CLI, "task", "attach", task["task_id"]["value"]], cli_env(secure),
                                 rows=33, columns=99, typed=b"hello\r", type_after=b"waiting")
        assert_typed_into(done.shown.decode(errors="replace"), done.returncode)
        framework.wait_state(task["task_id"]["value"], "TASK_FINISHED", timeout=60)
