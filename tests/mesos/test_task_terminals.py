"""A process task that asks for a terminal (ContainerInfo type MESOS with tty_info), on a process agent, without
a client: it runs on a pseudo-terminal of the size asked, its output (stderr merged) is logged to the sandbox's
stdout and streamed by ATTACH_CONTAINER_OUTPUT, and ATTACH_CONTAINER_INPUT types into it and resizes it, one
stream at a time; the end of a stream types nothing, so detaching leaves the task running (avmesos-cli's
`task attach` drives the same calls as shipped in tests/compat/test_task_attach.py)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api import recordio
from tests.support.mesos_framework import task_container_id, task_info

RECORDIO = "application/recordio"
INPUT_HEADERS = {"Content-Type": RECORDIO, "Message-Content-Type": "application/json"}


def _on_terminal(agent_id: Any, command: str, **window: int) -> dict[str, Any]:
    return task_info(agent_id, command=command, extra={"container": {
        "type": "MESOS", "tty_info": {"window_size": window} if window else {}}})


def _input(container_id: dict[str, Any], *process_io: dict[str, Any]) -> Iterator[bytes]:
    yield recordio.encode(json.dumps({"type": "ATTACH_CONTAINER_INPUT", "attach_container_input": {
        "type": "CONTAINER_ID", "container_id": container_id}}).encode())
    for io in process_io:
        yield recordio.encode(json.dumps({"type": "ATTACH_CONTAINER_INPUT", "attach_container_input": {
            "type": "PROCESS_IO", "process_io": io}}).encode())


def _typed(data: bytes) -> dict[str, Any]:
    return {"type": "DATA", "data": {"type": "STDIN", "data": base64.b64encode(data).decode()}}


def _resize(rows: int, columns: int) -> dict[str, Any]:
    return {"type": "CONTROL", "control": {"type": "TTY_INFO", "tty_info": {
        "window_size": {"rows": rows, "columns": columns}}}}


def _sandbox_file(agent: str, task_id: str, name: str) -> str:
    state = requests.get(f"http://{agent}/state", timeout=10).json()
    directory = next(e["directory"] for f in state["frameworks"] + state["completed_frameworks"]
                     for e in f["executors"] + f["completed_executors"] if e["id"] == task_id)
    return requests.get(f"http://{agent}/files/read", params={"path": f"{directory}/{name}", "offset": 0},
                        timeout=10).json()["data"]


@pytest.fixture
def on_agent(cluster, framework) -> Iterator[tuple[str, Any]]:
    """(a process agent's address, a framework on its cluster)."""
    m = cluster(1, simulate=False, use_docker=False)
    yield m.agent_addresses[0], framework(m.master_address)


def test_a_task_on_a_terminal_is_typed_into_resized_and_followed(on_agent: Any) -> None:
    agent, f = on_agent
    offer = f.take_offer()
    script = "stty size; tty; read line; echo got:$line; stty size; echo to-stderr >&2"
    task = _on_terminal(offer["agent_id"], script, rows=25, columns=70)
    task_id = task["task_id"]["value"]
    f.launch(offer, [task])
    f.wait_state(task_id, "TASK_RUNNING")
    wait_until(lambda: "25 70" in _sandbox_file(agent, task_id, "stdout"), 30, "the task to print its size")
    container_id = task_container_id(agent, task_id)
    with requests.post(f"http://{agent}/api/v1", json={"type": "ATTACH_CONTAINER_OUTPUT", "attach_container_output": {
            "container_id": container_id}}, headers={"Accept": RECORDIO}, stream=True, timeout=60) as output:
        assert output.status_code == 200, output.text
        fed = requests.post(f"http://{agent}/api/v1", data=_input(container_id, _resize(40, 120), _typed(b"hello\r")),
                            headers=INPUT_HEADERS, timeout=30)
        assert fed.status_code == 200, fed.text
        records = [json.loads(r) for r in recordio.Decoder().feed(output.content)]
    assert {r["data"]["type"] for r in records} == {"STDOUT"}, records   # the terminal merges stderr into it
    shown = b"".join(base64.b64decode(r["data"]["data"]) for r in records).decode()
    # the terminal echoes what is typed; the resize reached the command before the line it read
    assert shown == "hello\r\ngot:hello\r\n40 120\r\nto-stderr\r\n", shown
    f.wait_state(task_id, "TASK_FINISHED")
    logged = _sandbox_file(agent, task_id, "stdout")
    assert logged.startswith("25 70\r\n/dev/pts/") and logged.endswith(shown), logged
    assert _sandbox_file(agent, task_id, "stderr") == ""


def test_one_input_stream_at_a_time_and_its_end_leaves_the_task_running(on_agent: Any) -> None:
    agent, f = on_agent
    offer = f.take_offer()
    task = _on_terminal(offer["agent_id"], "cat")
    task_id = task["task_id"]["value"]
    f.launch(offer, [task])
    f.wait_state(task_id, "TASK_RUNNING")
    container_id = task_container_id(agent, task_id)
    release = threading.Event()
    first: dict[str, requests.Response] = {}

    def held_open() -> Iterator[bytes]:
        yield from _input(container_id, _typed(b"one\r"))
        release.wait(60)
        yield from _input(container_id, _typed(b""))   # a second naming record is ignored; then the end
    streaming = threading.Thread(target=lambda: first.update(answer=requests.post(
        f"http://{agent}/api/v1", data=held_open(), headers=INPUT_HEADERS, timeout=90)))
    streaming.start()
    try:
        wait_until(lambda: "one" in _sandbox_file(agent, task_id, "stdout"), 30, "the first stream to type")
        second = requests.post(f"http://{agent}/api/v1", data=_input(container_id, _typed(b"two\r")),
                               headers=INPUT_HEADERS, timeout=30)
        assert second.status_code == 409 and second.text == "Multiple input connections are not allowed"
    finally:
        release.set()
        streaming.join(60)
    assert first["answer"].status_code == 200, first["answer"].text
    # the stream's end typed no Ctrl-D: `cat` still runs and takes the next stream's typing
    assert f.sched.states(task_id)[-1] == "TASK_RUNNING"
    third = requests.post(f"http://{agent}/api/v1", data=_input(container_id, _typed(b"three\r")),
                          headers=INPUT_HEADERS, timeout=30)
    assert third.status_code == 200, third.text
    wait_until(lambda: "three\r\nthree" in _sandbox_file(agent, task_id, "stdout"), 30, "cat to echo the third")
    assert "two" not in _sandbox_file(agent, task_id, "stdout")
    f.driver.killTask({"value": task_id})
    f.wait_state(task_id, "TASK_KILLED")


def test_a_task_without_a_terminal_takes_no_input(on_agent: Any) -> None:
    agent, f = on_agent
    offer = f.take_offer()
    task = task_info(offer["agent_id"], command="sleep 300")
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    answer = requests.post(f"http://{agent}/api/v1", data=_input(task_container_id(agent, task["task_id"]["value"])),
                           headers=INPUT_HEADERS, timeout=30)
    assert answer.status_code == 400 and "takes no input: a task takes input only on a terminal" in answer.text
    f.driver.killTask(task["task_id"])
