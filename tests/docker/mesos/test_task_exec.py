"""avmesos-cli's `mesos task exec`, as shipped, into a running Docker task on a secure cluster: the nested
container session is a `docker exec` in the task's container (its filesystem, environment and user), the CLI
authenticates to the master and the agent with the cluster's credential, and a caller without it is refused.
(A process task, and stdin with -i: tests/compat/test_task_exec.py.)
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scylla_singa.mesos.api.container_info import SANDBOX_MOUNT
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.compat.client_scenarios import CLIENTS, installed
from tests.support.cli_targets import MESOS_CLI, cli_env, docker_agent
from tests.support.mesos_framework import task_info
from tests.support.on_a_terminal import run_on_a_terminal

TINY = "scylla-tiny:latest"   # runs as 65534 (its Dockerfile's USER)


@pytest.fixture(scope="module")
def docker_task(docker_client, tmp_path_factory) -> Iterator[tuple[EmbeddedMesos, str, Path, Path]]:
    """A secure cluster with a Docker agent running one scylla-tiny task; (the cluster, the task id, a CLI
    config with the cluster's credential, one without)."""
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    with docker_agent(docker_client, tmp_path_factory.mktemp("cli"), "exec") as (m, framework, secure, anonymous):
        offer = framework.take_offer(cpus=0.5, mem=128)
        task = task_info(offer["agent_id"], command="sleep 600", image=TINY)
        framework.launch(offer, [task])
        framework.wait_state(task["task_id"]["value"], "TASK_RUNNING", timeout=60)
        yield m, task["task_id"]["value"], secure, anonymous


def _exec(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([MESOS_CLI, "task", "exec", *args], env=cli_env(config), capture_output=True, text=True,
                          timeout=60)


def test_task_exec_runs_inside_the_docker_task(docker_task: Any) -> None:
    """Its process 1 is the task's command (the task's PID namespace), its environment the task's, its user
    the image's (65534), and its exit code and both streams come back."""
    _, task_id, secure, _ = docker_task
    done = _exec(secure, task_id, "sh", "-c", "id -u; tr '\\0' ' ' < /proc/1/cmdline; echo; echo $MESOS_SANDBOX; "
                                              "echo oops >&2; exit 3")
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    uid, init, sandbox = done.stdout.splitlines()
    assert (uid, sandbox) == ("65534", SANDBOX_MOUNT) and "sleep 600" in init, done.stdout
    assert done.stderr.strip() == "oops", done.stderr


def test_task_exec_needs_the_agents_credential(docker_task: Any) -> None:
    _, task_id, _, anonymous = docker_task
    done = _exec(anonymous, task_id, "true")
    assert done.returncode != 0 and "401" in done.stdout + done.stderr, (done.returncode, done.stdout, done.stderr)


def test_task_exec_with_a_terminal_is_the_engines_terminal_of_the_users_size(docker_task: Any) -> None:
    """`-i -t`: `docker exec -t` in the task's container, resized to the user's terminal, typed into; stderr
    comes back on the terminal."""
    _, task_id, secure, _ = docker_task
    done = run_on_a_terminal([MESOS_CLI, "task", "exec", "-i", "-t", task_id,
                              "sh", "-c", "echo ready; read line; tty; stty size; echo got:$line >&2; exit 2"],
                             cli_env(secure), rows=29, columns=97, typed=b"hello\r", type_after=b"ready")
    shown = done.shown.decode(errors="replace")
    assert done.returncode == 2, (done.returncode, shown)
    lines = [line.rstrip("\r") for line in shown.split("\n")]
    assert lines[:2] == ["ready", "hello"] and lines[2].startswith("/dev/pts/"), shown
    assert lines[3:] == ["29 97", "got:hello", ""], shown
