"""avmesos-cli's `mesos task attach --no-stdin`, as shipped, to a running process task of ours: its output from
the attach on, on the user's terminal, until the task ends (ATTACH_CONTAINER_OUTPUT). (A Docker task:
tests/docker/mesos/test_task_attach.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.cli_targets import MESOS_CLI, cli_env, process_agent
from tests.support.mesos_framework import TestFramework, task_info
from tests.support.on_a_terminal import run_on_a_terminal

from .client_scenarios import CLIENTS, installed

# 60 lines on each stream over about 6 s, then a last line on each
TICKER = ("i=0; while [ $i -lt 60 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); sleep 0.1; done; "
          "echo last-out; echo last-err >&2")


@pytest.fixture
def attach_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestFramework, Any, dict[str, str]]]:
    """A process agent and a framework on it; (the framework, an offer, the CLI's environment)."""
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    with process_agent(tmp_path_factory.mktemp("home"), tmp_path_factory.mktemp("cli"), "attach-target") as (
            _, framework, config):
        yield framework, framework.take_offer(), cli_env(config)


def assert_attached_output(shown: str, returncode: int) -> None:
    """What `task attach` showed: from some line on, every line of both streams in order, to the last ones."""
    assert returncode == 0, (returncode, shown)
    lines = [line.rstrip("\r") for line in shown.split("\n") if line.strip()]
    for prefix in ("out", "err"):
        mine = [line for line in lines if line.startswith(f"{prefix}-") or line == f"last-{prefix}"]
        assert mine and mine[-1] == f"last-{prefix}", shown
        first = int(mine[0].split("-")[1])
        assert first < 50 and mine[:-1] == [f"{prefix}-{i}" for i in range(first, 60)], shown


def test_task_attach_shows_a_running_tasks_output_until_it_ends(attach_env: Any) -> None:
    framework, offer, env = attach_env
    task = task_info(offer["agent_id"], command=TICKER)
    framework.launch(offer, [task])
    framework.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    done = run_on_a_terminal([MESOS_CLI, "task", "attach", "--no-stdin",
                              task["task_id"]["value"]], env, rows=24, columns=80)
    assert_attached_output(done.shown.decode(errors="replace"), done.returncode)
    framework.wait_state(task["task_id"]["value"], "TASK_FINISHED")


# Prints "waiting" until a line was typed (so the test types once the CLI shows output, its terminal raw and its
# input stream attached), then the terminal's size and the line.
TYPING_PROBE = "(while :; do echo waiting; sleep 0.2; done) & read line; kill $!; stty size; echo got:$line"


def assert_typed_into(shown: str, returncode: int) -> None:
    """What `task attach` (with stdin) showed: the typed line echoed by the task's terminal, then the size of the
    CLI's own terminal, then what the task read."""
    assert returncode == 0, (returncode, shown)
    lines = [line.rstrip("\r") for line in shown.split("\n") if line.strip() and line.strip() != "waiting"]
    assert lines[-3:] == ["hello", "33 99", "got:hello"], shown


def test_task_attach_types_into_a_task_on_a_terminal_at_the_users_size(attach_env: Any) -> None:
    framework, offer, env = attach_env
    task = task_info(offer["agent_id"], command=TYPING_PROBE,
                     extra={"container": {"type": "MESOS", "tty_info": {}}})
    framework.launch(offer, [task])
    framework.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    done = run_on_a_terminal([MESOS_CLI, "task", "attach", task["task_id"]["value"]], env, rows=33, columns=99,
                             typed=b"hello\r", type_after=b"waiting")
    assert_typed_into(done.shown.decode(errors="replace"), done.returncode)
    framework.wait_state(task["task_id"]["value"], "TASK_FINISHED")
