"""avmesos-cli's `mesos task exec`, as shipped, into a running task of ours: a nested container session
(LAUNCH_NESTED_CONTAINER_SESSION, its output streamed back; ATTACH_CONTAINER_INPUT with -i; WAIT_CONTAINER for
its exit code), run in the task's sandbox as the task's user; with -t, on a terminal of the size of the
user's, typed into with -i. (A Docker task: tests/docker/mesos/test_task_exec.py.)
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.cli_targets import MESOS_CLI, cli_env, process_agent
from tests.support.mesos_framework import task_info
from tests.support.on_a_terminal import run_on_a_terminal

from .client_scenarios import CLIENTS, installed

NOBODY_UID = 65534


@pytest.fixture(scope="module")
def running_task(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedMesos, str, Path]]:
    """A process agent (work dir searchable by every user, as /var/lib/mesos is) running one task as nobody;
    (the cluster, the task id, avmesos-cli's config file)."""
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    with process_agent(tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("cli"), "exec-target") as (
            cluster, framework, config):
        offer = framework.take_offer()
        task = task_info(offer["agent_id"], command="echo task-marker > marker; sleep 600")
        framework.launch(offer, [task])
        framework.wait_state(task["task_id"]["value"], "TASK_RUNNING")
        yield cluster, task["task_id"]["value"], config


def _exec(config: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([MESOS_CLI, "task", "exec", *args], env=cli_env(config), input=stdin, capture_output=True,
                          text=True, timeout=60)


def test_task_exec_runs_in_the_task_sandbox_as_its_user(running_task: Any) -> None:
    _, task_id, config = running_task
    done = _exec(config, task_id, "sh", "-c", "id -u; cat marker; echo to-stderr >&2; exit 3")
    assert done.returncode == 3, (done.returncode, done.stdout, done.stderr)
    assert done.stdout.split() == [str(NOBODY_UID), "task-marker"], done.stdout
    assert done.stderr.strip() == "to-stderr", done.stderr


def test_task_exec_interactive_feeds_stdin(running_task: Any) -> None:
    _, task_id, config = running_task
    done = _exec(config, "-i", task_id, "sh", "-c", "read line; echo got:$line", stdin="hello\n")
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert done.stdout.strip() == "got:hello", done.stdout


def test_nested_sessions_end_and_leave_nothing_running(running_task: Any) -> None:
    cluster, task_id, config = running_task
    assert _exec(config, task_id, "true").returncode == 0
    agent = cluster.agent_addresses[0]
    import requests
    answer = requests.post(f"http://{agent}/api/v1", json={"type": "GET_CONTAINERS", "get_containers": {
        "show_nested": True}}, timeout=10).json()
    nested = [c for c in answer["get_containers"].get("containers", []) if "parent" in c["container_status"]
              ["container_id"]]
    assert nested == []


def test_task_exec_with_a_terminal_runs_on_one_and_merges_stderr(running_task: Any) -> None:
    _, task_id, config = running_task
    done = run_on_a_terminal([MESOS_CLI, "task", "exec", "-t", task_id, "sh", "-c",
                              "tty; test -t 0 && echo on-a-terminal; echo to-stderr >&2; exit 3"],
                             cli_env(config), rows=30, columns=90)
    shown = done.shown.decode(errors="replace")
    assert done.returncode == 3, (done.returncode, shown)
    lines = [line.rstrip("\r") for line in shown.split("\n")]   # CR LF, and the local terminal adds a CR
    assert lines[0].startswith("/dev/pts/") and lines[1:] == ["on-a-terminal", "to-stderr", ""], shown


def test_task_exec_interactive_with_a_terminal_has_the_users_size_and_takes_typing(running_task: Any) -> None:
    _, task_id, config = running_task
    done = run_on_a_terminal([MESOS_CLI, "task", "exec", "-i", "-t", task_id, "sh",
                              "-c", "echo ready; read line; stty size; echo got:$line"],
                             cli_env(config), rows=37, columns=111, typed=b"hello\r", type_after=b"ready")
    shown = done.shown.decode(errors="replace")
    assert done.returncode == 0, (done.returncode, shown)
    # the CLI sends its terminal's size on the input stream before what is typed (a command asking at once
    # may still see 0 0, with Apache Mesos too)
    lines = [line.rstrip("\r") for line in shown.split("\n")]
    assert lines == ["ready", "hello", "37 111", "got:hello", ""], shown
