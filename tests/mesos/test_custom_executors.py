"""A framework's own executor on a process agent, through the v1 executor HTTP API (`/api/v1/executor`).

The executor is tests/support/v1_executor.py (it logs every event it gets
in its sandbox and answers LAUNCH, KILL, MESSAGE and SHUTDOWN); mesos-go's
example-executor runs through the same API in tests/compat.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import requests

from tests.support import v1_executor
from tests.support.mesos_framework import task_info

EXECUTOR_SCRIPT = Path(v1_executor.__file__)
# The agent runs the executor as FrameworkInfo.user ("nobody"), with a standard PATH: a Python that user can
# run (the test's own may live under root's 0700 home); the executor needs the standard library only.
PYTHON = "python3"


def _executor(executor_id: str, command: str | None = None) -> dict[str, Any]:
    return {"type": "CUSTOM", "executor_id": {"value": executor_id}, "name": executor_id,
            "command": {"value": command or f"{PYTHON} {EXECUTOR_SCRIPT}", "shell": True},
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}},
                          {"name": "mem", "type": "SCALAR", "scalar": {"value": 32}}]}


def _executor_task(agent_id: dict, executor: dict) -> dict[str, Any]:
    task = task_info(agent_id)
    del task["command"]
    task["executor"] = executor
    return task


def _group_task(agent_id: dict) -> dict[str, Any]:
    """A task of a group: a CommandInfo (Mesos requires one) that the custom executor is free to ignore."""
    return task_info(agent_id, command="true", cpus=0.1, mem=16)


def _agent_executors(agent: str) -> list[dict]:
    state = requests.get(f"http://{agent}/state", timeout=10).json()
    return [e for fw in state["frameworks"] for e in fw["executors"]]


def _events(directory: str) -> list[str]:
    path = Path(directory) / "events.log"
    return path.read_text().split() if path.exists() else []


def test_custom_executor_runs_its_tasks_and_obeys_kill_message_and_shutdown(cluster, framework) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    executor = _executor("mine")
    tasks = [_executor_task(offer["agent_id"], executor) for _ in range(2)]
    f.launch(offer, tasks)
    for task in tasks:
        running = f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
        assert running["source"] == "SOURCE_EXECUTOR" and running["executor_id"]["value"] == "mine"
    [ex] = _agent_executors(m.agent_addresses[0])   # one executor runs both tasks
    assert ex["id"] == "mine" and sorted(t["id"] for t in ex["tasks"]) == sorted(t["task_id"]["value"] for t in tasks)
    f.sched.wait(lambda: _events(ex["directory"]).count("ACKNOWLEDGED") == 2, what="both updates acknowledged")
    assert _events(ex["directory"])[:3] == ["SUBSCRIBED", "LAUNCH", "LAUNCH"]

    f.driver.killTask(tasks[0]["task_id"])
    f.wait_state(tasks[0]["task_id"]["value"], "TASK_KILLED")
    assert "KILL" in _events(ex["directory"])

    f.driver.sendFrameworkMessage({"value": "mine"}, offer["agent_id"], base64.b64encode(b"hello").decode())
    f.sched.wait(lambda: (Path(ex["directory"]) / "message.txt").exists(), what="the message at the executor")
    assert (Path(ex["directory"]) / "message.txt").read_bytes() == b"hello"
    metrics = requests.get(f"http://{m.master_address}/metrics/snapshot", timeout=10).json()
    f.sched.wait(lambda: requests.get(f"http://{m.master_address}/metrics/snapshot", timeout=10).json()
                 ["master/messages_executor_to_framework"] == 1, what="the executor's answer at the master")
    assert metrics["master/valid_framework_to_executor_messages"] == 1

    f.stop()   # TEARDOWN: the agent kills the last task and shuts the executor down
    f.sched.wait(lambda: "SHUTDOWN" in _events(ex["directory"]), what="SHUTDOWN at the executor")
    f.sched.wait(lambda: not _agent_executors(m.agent_addresses[0]), what="the executor to be gone on the agent")


def test_a_task_group_on_a_custom_executor_reaches_it_as_one_launch_group(cluster, framework) -> None:
    """LAUNCH_GROUP with a CUSTOM executor: the executor gets the group in one LAUNCH_GROUP event (what to do
    with it is its business, as in Mesos); a second group goes to the same running executor."""
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    executor = _executor("grouped")
    groups = [[_group_task(offer["agent_id"]) for _ in range(2)], [_group_task(offer["agent_id"])]]
    f.driver.acceptOffers([offer["id"]], [{"type": "LAUNCH_GROUP", "launch_group": {
        "executor": executor, "task_group": {"tasks": tasks}}} for tasks in groups], filters={"refuse_seconds": 0})
    for task in groups[0] + groups[1]:
        running = f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
        assert running["source"] == "SOURCE_EXECUTOR" and running["executor_id"]["value"] == "grouped"
    [ex] = _agent_executors(m.agent_addresses[0])   # one executor process holds both groups
    assert sorted(t["id"] for t in ex["tasks"]) == sorted(t["task_id"]["value"] for t in groups[0] + groups[1])
    f.sched.wait(lambda: _events(ex["directory"]).count("ACKNOWLEDGED") == 3, what="the three updates acknowledged")
    assert _events(ex["directory"])[:3] == ["SUBSCRIBED", "LAUNCH_GROUP", "LAUNCH_GROUP"]

    f.driver.killTask(groups[1][0]["task_id"])   # a task of a group on a custom executor is killed alone
    f.wait_state(groups[1][0]["task_id"]["value"], "TASK_KILLED")
    assert all(f.sched.states(t["task_id"]["value"])[-1] == "TASK_RUNNING" for t in groups[0])


def test_a_task_group_executor_in_a_docker_container_is_refused_as_mesos_does(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    executor = {**_executor("docked"), "container": {"type": "DOCKER", "docker": {"image": "scylla-tiny:latest"}}}
    task = _group_task(offer["agent_id"])
    f.driver.acceptOffers([offer["id"]], [{"type": "LAUNCH_GROUP", "launch_group": {
        "executor": executor, "task_group": {"tasks": [task]}}}], filters={"refuse_seconds": 0})
    status = f.wait_state(task["task_id"]["value"], "TASK_ERROR")
    assert (status["reason"], status["message"]) == ("REASON_TASK_GROUP_INVALID",
                                                     "Docker ContainerInfo is not supported on the executor")


def test_an_executor_that_exits_fails_its_tasks_and_is_forgotten(cluster, framework) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    f = framework(m.master_address)
    offer = f.take_offer()
    task = _executor_task(offer["agent_id"], _executor("broken", command="exit 3"))
    f.launch(offer, [task])
    status = f.wait_state(task["task_id"]["value"], "TASK_FAILED")
    assert status["reason"] == "REASON_EXECUTOR_TERMINATED" and "3" in status["message"]

    def executors() -> list:
        answer = requests.post(f"http://{m.master_address}/api/v1", json={"type": "GET_EXECUTORS"}, timeout=10)
        return answer.json()["get_executors"].get("executors", [])
    f.sched.wait(lambda: not executors(), what="the executor to be gone on the master")


def test_executor_api_answers_errors_as_mesos(cluster) -> None:
    m = cluster(1, simulate=False, use_docker=False)
    url = f"http://{m.agent_addresses[0]}/api/v1/executor"
    call = {"type": "SUBSCRIBE", "framework_id": {"value": "nope"}, "executor_id": {"value": "nope"},
            "subscribe": {}}
    unknown = requests.post(url, json=call, timeout=10)
    assert unknown.status_code == 400 and "cannot be found" in unknown.text
    wrong_method = requests.get(url, timeout=10)
    assert wrong_method.status_code == 405 and wrong_method.headers["Allow"] == "POST"
    no_executor_id = requests.post(url, json={k: v for k, v in call.items() if k != "executor_id"}, timeout=10)
    assert no_executor_id.status_code == 400 and "executor_id" in no_executor_id.text
    no_type = requests.post(url, data=b"{}", headers={"Content-Type": "text/plain"}, timeout=10)
    assert no_type.status_code == 415


def test_a_custom_executor_without_command_is_refused_as_mesos_does(cluster, framework) -> None:
    m = cluster(1)
    f = framework(m.master_address)
    offer = f.take_offer()
    executor = _executor("mine")
    del executor["command"]
    task = _executor_task(offer["agent_id"], executor)
    f.launch(offer, [task])
    status = f.wait_state(task["task_id"]["value"], "TASK_ERROR")
    assert status["reason"] == "REASON_TASK_INVALID"
    assert status["message"] == "'ExecutorInfo.command' must be set for 'CUSTOM' executor"
