"""LAUNCH_GROUP on a process agent: a task group starts and dies together, each task with its own updates,
as under Mesos's default executor; and what a task group may not hold, refused at ACCEPT with Mesos's reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import requests

from tests.support.mesos_framework import task_info


def _launch_group(f: Any, offer: dict, tasks: list[dict], executor_id: str) -> None:
    executor = {"type": "DEFAULT", "executor_id": {"value": executor_id}}
    f.driver.acceptOffers([offer["id"]], [{"type": "LAUNCH_GROUP", "launch_group": {
        "executor": executor, "task_group": {"tasks": tasks}}}], filters={"refuse_seconds": 0})


def _executors(master: str) -> list[dict]:
    answer = requests.post(f"http://{master}/api/v1", json={"type": "GET_EXECUTORS"}, timeout=10).json()
    return answer["get_executors"].get("executors", [])


def test_a_failing_task_kills_the_rest_of_its_group(cluster, framework) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    failing = task_info(offer["agent_id"], command="sleep 0.5; exit 3")
    sleeper = task_info(offer["agent_id"], command="sleep 1000", grace_s=1)
    _launch_group(f, offer, [failing, sleeper], "group-1")
    for task in (failing, sleeper):
        f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    assert [e["executor_info"]["executor_id"]["value"] for e in _executors(m.master_address)] == ["group-1"]
    failed = f.wait_state(failing["task_id"]["value"], "TASK_FAILED")
    killed = f.wait_state(sleeper["task_id"]["value"], "TASK_KILLED")
    assert failed["executor_id"]["value"] == killed["executor_id"]["value"] == "group-1"
    f.sched.wait(lambda: not _executors(m.master_address), what="the group's executor to be gone on the master")


def test_a_group_whose_tasks_all_finish_ends_with_each_task_finished(cluster, framework) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    tasks = [task_info(offer["agent_id"], command="echo one > out"),
             task_info(offer["agent_id"], command="sleep 0.5; echo two > out")]
    _launch_group(f, offer, tasks, "group-2")
    for task in tasks:
        f.wait_state(task["task_id"]["value"], "TASK_FINISHED")
        assert f.sched.states(task["task_id"]["value"])[-1] == "TASK_FINISHED"
    state = requests.get(f"http://{m.agent_addresses[0]}/state", timeout=10).json()
    executors = [e for fw in state["frameworks"] + state["completed_frameworks"]
                 for e in fw["executors"] + fw["completed_executors"]]
    [executor] = [e for e in executors if e["id"] == "group-2"]   # one executor holds both tasks
    assert sorted(t["id"] for t in executor["completed_tasks"]) == sorted(t["task_id"]["value"] for t in tasks)
    for task, text in zip(tasks, ("one\n", "two\n")):   # each task in its own directory of the executor's sandbox
        assert (Path(executor["directory"]) / "tasks" / task["task_id"]["value"] / "out").read_text() == text
    f.sched.wait(lambda: not _executors(m.master_address), what="the group's executor to be gone on the master")


def test_what_a_task_group_may_not_hold_is_refused_with_task_group_invalid(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    good = task_info(offer["agent_id"], command="true")
    bad = task_info(offer["agent_id"], command="true",
                    extra={"executor": {"executor_id": {"value": "x"}, "command": {"value": "x"}}})
    _launch_group(f, offer, [good, bad], "group-3")
    for task in (good, bad):
        status = f.wait_state(task["task_id"]["value"], "TASK_ERROR")
        assert status["reason"] == "REASON_TASK_GROUP_INVALID"
        assert "'TaskInfo.executor' must not be set" in status["message"]

