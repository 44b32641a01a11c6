"""The streaming calls of `task exec` on a process agent, without a client: what a session streams, the input
stream's rules, and the clear 4xx answers to what they refuse (avmesos-cli drives them as shipped in
tests/compat/test_task_exec.py and tests/docker/mesos/test_task_exec.py)."""

from __future__ import annotations

import base64
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api import recordio
from scylla_singa.mesos.embedded import EmbeddedMesos

RECORDIO = "application/recordio"


@pytest.fixture
def agent(cluster) -> str:
    """A process agent with one standalone container (the parent) running as nobody."""
    m: EmbeddedMesos = cluster(1, simulate=False, use_docker=False)
    address = m.agent_addresses[0]
    launched = _post(address, {"type": "LAUNCH_CONTAINER", "launch_container": {
        "container_id": {"value": "parent"}, "command": {"value": "exec sleep 300", "user": "nobody"}}})
    assert launched.status_code == 200, launched.text
    return address


def _post(agent: str, body: dict[str, Any], accept: str = "application/json", **kw: Any) -> requests.Response:
    return requests.post(f"http://{agent}/api/v1", json=body, headers={"Accept": accept}, timeout=30, **kw)


def _session(child: str, *argv: str) -> dict[str, Any]:
    return {"type": "LAUNCH_NESTED_CONTAINER_SESSION", "launch_nested_container_session": {
        "container_id": {"value": child, "parent": {"value": "parent"}},
        "command": {"value": argv[0], "arguments": list(argv), "shell": False}}}


def _input(*records: dict[str, Any]) -> bytes:
    return b"".join(recordio.encode(json.dumps(r).encode()) for r in records)


def _stdin(data: bytes) -> dict[str, Any]:
    return {"type": "ATTACH_CONTAINER_INPUT", "attach_container_input": {"type": "PROCESS_IO", "process_io": {
        "type": "DATA", "data": {"type": "STDIN", "data": base64.b64encode(data).decode()}}}}


def _names(child: str) -> dict[str, Any]:
    return {"type": "ATTACH_CONTAINER_INPUT", "attach_container_input": {
        "type": "CONTAINER_ID", "container_id": {"value": child, "parent": {"value": "parent"}}}}


def test_a_session_streams_its_output_as_processio_records_then_its_end_is_waited(agent: str) -> None:
    answer = _post(agent, _session("s1", "sh", "-c", "id -u; echo e >&2; exit 5"), accept=RECORDIO)
    assert answer.status_code == 200 and answer.headers["Content-Type"] == RECORDIO, answer.text
    assert answer.headers["Message-Content-Type"] == "application/json"
    records = [json.loads(r) for r in recordio.Decoder().feed(answer.content)]
    assert {r["type"] for r in records} == {"DATA"}
    out = {kind: b"".join(base64.b64decode(r["data"]["data"]) for r in records if r["data"]["type"] == kind)
           for kind in ("STDOUT", "STDERR")}
    assert out == {"STDOUT": b"65534\n", "STDERR": b"e\n"}
    waited = _post(agent, {"type": "WAIT_CONTAINER", "wait_container": {
        "container_id": {"value": "s1", "parent": {"value": "parent"}}}})
    assert waited.json() == {"type": "WAIT_CONTAINER", "wait_container": {"exit_status": 5 << 8}}


def test_input_reaches_a_session_until_its_end_of_input(agent: str) -> None:
    result: dict[str, requests.Response] = {}
    reader = threading.Thread(target=lambda: result.update(
        out=_post(agent, _session("s2", "cat"), accept=RECORDIO)))
    reader.start()

    def listed() -> bool:
        answer = _post(agent, {"type": "GET_CONTAINERS", "get_containers": {"show_nested": True}}).json()
        return any(c["container_id"]["value"] == "s2" for c in answer["get_containers"].get("containers", []))
    wait_until(listed, 30, "the session's container to be listed")
    fed = requests.post(f"http://{agent}/api/v1", data=_input(_names("s2"), _stdin(b"hello\n"), _stdin(b"")),
                        headers={"Content-Type": RECORDIO, "Message-Content-Type": "application/json"}, timeout=30)
    assert fed.status_code == 200, fed.text
    reader.join(30)
    records = [json.loads(r) for r in recordio.Decoder().feed(result["out"].content)]
    assert b"".join(base64.b64decode(r["data"]["data"]) for r in records) == b"hello\n"


@pytest.mark.parametrize("records, status, words", [
    ([_stdin(b"x")], 400, "must name the container"),
    ([_names("nobody-here")], 404, "cannot be found"),
    ([], 400, "ended before it named a container"),
    ([{"type": "ATTACH_CONTAINER_INPUT", "attach_container_input": {
        "type": "CONTAINER_ID", "container_id": {"value": "parent"}}}], 400, "parent takes no input"),
], ids=["data-first", "unknown-container", "empty", "not-nested"])
def test_a_bad_input_stream_is_refused_clearly(agent: str, records: list, status: int, words: str) -> None:
    answer = requests.post(f"http://{agent}/api/v1", data=_input(*records),
                           headers={"Content-Type": RECORDIO}, timeout=30)
    assert answer.status_code == status and words in answer.text, answer.text


@pytest.mark.parametrize("container", [
    {"type": "DOCKER", "docker": {"image": "busybox"}, "tty_info": {}},
    {"type": "MESOS", "tty_info": {}, "volumes": [{"container_path": "/x", "mode": "RW"}]},
    {"type": "MESOS"},
], ids=["docker-image", "volumes", "no-tty-info"])
def test_a_session_needs_recordio_an_existing_parent_and_no_container_but_a_terminal(
        agent: str, container: dict[str, Any]) -> None:
    assert _post(agent, _session("s3", "true")).status_code == 406
    orphan = _session("s4", "true")
    orphan["launch_nested_container_session"]["container_id"]["parent"] = {"value": "none"}
    answer = _post(agent, orphan, accept=RECORDIO)
    assert answer.status_code == 400 and answer.text == "Parent container none does not exist"
    more = _session("s5", "true")
    more["launch_nested_container_session"]["container"] = container
    answer = _post(agent, more, accept=RECORDIO)
    assert answer.status_code == 400 and answer.text == "The provided ContainerInfo is not supported"


def test_a_terminal_is_only_for_a_session(agent: str) -> None:
    answer = _post(agent, {"type": "LAUNCH_CONTAINER", "launch_container": {
        "container_id": {"value": "n1", "parent": {"value": "parent"}}, "command": {"value": "true"},
        "container": {"type": "MESOS", "tty_info": {}}}})
    assert answer.status_code == 400 and answer.text == "The provided ContainerInfo is not supported"


def _stdout(answer: requests.Response) -> bytes:
    records = [json.loads(r) for r in recordio.Decoder().feed(answer.content)]
    assert {r["data"]["type"] for r in records} <= {"STDOUT"}, records   # a terminal merges stderr into it
    return b"".join(base64.b64decode(r["data"]["data"]) for r in records)


def _with_terminal(call: dict[str, Any], **window: int) -> dict[str, Any]:
    call["launch_nested_container_session"]["container"] = {
        "type": "MESOS", "tty_info": {"window_size": window} if window else {}}
    return call


def test_a_session_with_a_terminal_runs_on_one_of_the_size_asked_for(agent: str) -> None:
    script = "tty; stty size; test -t 0 && test -t 1 && echo on-a-terminal; echo e >&2; id -u; exit 4"
    answer = _post(agent, _with_terminal(_session("t1", "sh", "-c", script), rows=33, columns=101),
                   accept=RECORDIO)
    assert answer.status_code == 200, answer.text
    lines = _stdout(answer).decode().split("\r\n")   # the terminal turns each newline into CR LF
    assert lines[0].startswith("/dev/pts/") and lines[1:] == ["33 101", "on-a-terminal", "e", "65534", ""], lines
    waited = _post(agent, {"type": "WAIT_CONTAINER", "wait_container": {
        "container_id": {"value": "t1", "parent": {"value": "parent"}}}})
    assert waited.json()["wait_container"]["exit_status"] == 4 << 8


def _resize(rows: int, columns: int) -> dict[str, Any]:
    return {"type": "ATTACH_CONTAINER_INPUT", "attach_container_input": {"type": "PROCESS_IO", "process_io": {
        "type": "CONTROL", "control": {"type": "TTY_INFO", "tty_info": {
            "window_size": {"rows": rows, "columns": columns}}}}}}


def test_a_terminal_session_is_resized_and_typed_into_through_its_input_stream(agent: str) -> None:
    result: dict[str, requests.Response] = {}
    script = "read line; echo got:$line; stty size; cat; echo after-eof"
    reader = threading.Thread(target=lambda: result.update(
        out=_post(agent, _with_terminal(_session("t2", "sh", "-c", script)), accept=RECORDIO)))
    reader.start()

    def listed() -> bool:
        answer = _post(agent, {"type": "GET_CONTAINERS", "get_containers": {"show_nested": True}}).json()
        return any(c["container_id"]["value"] == "t2" for c in answer["get_containers"].get("containers", []))
    wait_until(listed, 30, "the session's container to be listed")
    fed = requests.post(f"http://{agent}/api/v1", data=_input(
        _names("t2"), _resize(40, 120), _stdin(b"hello\r"), _stdin(b"")),
        headers={"Content-Type": RECORDIO, "Message-Content-Type": "application/json"}, timeout=30)
    assert fed.status_code == 200, fed.text
    reader.join(30)
    out = _stdout(result["out"]).decode()
    # the terminal echoes what is typed; its end of input (Ctrl-D) ends `cat`
    assert "got:hello\r\n40 120\r\n" in out and out.endswith("after-eof\r\n"), out


def _attach(agent: str, container_id: dict[str, Any], accept: str = RECORDIO, **kw: Any) -> requests.Response:
    return _post(agent, {"type": "ATTACH_CONTAINER_OUTPUT", "attach_container_output": {"container_id": container_id}},
                 accept=accept, **kw)


def test_attaching_to_a_containers_output_streams_it_from_then_to_its_end(agent: str) -> None:
    script = ("i=0; while [ $i -lt 40 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); sleep 0.1; done; "
              "echo last-out; echo last-err >&2")
    launched = _post(agent, {"type": "LAUNCH_CONTAINER", "launch_container": {
        "container_id": {"value": "ticker"}, "command": {"value": script, "user": "nobody"}}})
    assert launched.status_code == 200, launched.text
    answer = _attach(agent, {"value": "ticker"})
    assert answer.status_code == 200 and answer.headers["Content-Type"] == RECORDIO, answer.text
    records = [json.loads(r) for r in recordio.Decoder().feed(answer.content)]
    out = {kind: b"".join(base64.b64decode(r["data"]["data"]) for r in records if r["data"]["type"] == kind)
           .decode().split() for kind in ("STDOUT", "STDERR")}
    # from the attach on, every line, in order, to the last one written before the end
    for kind, prefix in (("STDOUT", "out"), ("STDERR", "err")):
        lines = out[kind]
        assert lines and lines[-1] == f"last-{prefix}", out
        first = int(lines[0].split("-")[1])
        assert lines[:-1] == [f"{prefix}-{i}" for i in range(first, 40)], out
    assert _attach(agent, {"value": "ticker"}).status_code == 404   # ended: nothing to attach to


def test_attaching_to_output_needs_recordio_and_a_running_container_of_this_agent(agent: str) -> None:
    assert _attach(agent, {"value": "parent"}, accept="application/json").status_code == 406
    unknown = _attach(agent, {"value": "nobody-here"})
    assert unknown.status_code == 404 and "nobody-here" in unknown.text, unknown.text
    ended = _attach(agent, {"value": "s1", "parent": {"value": "parent"}})
    assert ended.status_code == 404 and "parent.s1" in ended.text, ended.text
    launched = _post(agent, {"type": "LAUNCH_CONTAINER", "launch_container": {
        "container_id": {"value": "quiet", "parent": {"value": "parent"}}, "command": {"value": "sleep 300"}}})
    assert launched.status_code == 200, launched.text
    no_session = _attach(agent, {"value": "quiet", "parent": {"value": "parent"}})
    assert no_session.status_code == 400 and "LAUNCH_NESTED_CONTAINER_SESSION" in no_session.text, no_session.text


def test_a_running_sessions_output_can_also_be_attached_to(agent: str) -> None:
    result: dict[str, requests.Response] = {}
    reader = threading.Thread(target=lambda: result.update(out=_post(
        agent, _session("s7", "sh", "-c", "read x; echo out-$x; echo err-$x >&2"), accept=RECORDIO)))
    reader.start()

    def listed() -> bool:
        answer = _post(agent, {"type": "GET_CONTAINERS", "get_containers": {"show_nested": True}}).json()
        return any(c["container_id"]["value"] == "s7" for c in answer["get_containers"].get("containers", []))
    wait_until(listed, 30, "the session's container to be listed")
    with _attach(agent, {"value": "s7", "parent": {"value": "parent"}}, stream=True) as attached:
        assert attached.status_code == 200, attached.text
        fed = requests.post(f"http://{agent}/api/v1", data=_input(_names("s7"), _stdin(b"go\n"), _stdin(b"")),
                            headers={"Content-Type": RECORDIO, "Message-Content-Type": "application/json"}, timeout=30)
        assert fed.status_code == 200, fed.text
        followed = [json.loads(r) for r in recordio.Decoder().feed(attached.content)]
    reader.join(30)
    session = [json.loads(r) for r in recordio.Decoder().feed(result["out"].content)]
    for records in (session, followed):   # the attach sees what the session's own answer streams
        out = {kind: b"".join(base64.b64decode(r["data"]["data"]) for r in records if r["data"]["type"] == kind)
               for kind in ("STDOUT", "STDERR")}
        assert out == {"STDOUT": b"out-go\n", "STDERR": b"err-go\n"}, records


def test_a_caller_that_hangs_up_stops_the_following_not_the_container(agent: str) -> None:
    with _attach(agent, {"value": "parent"}, stream=True) as answer:
        assert answer.status_code == 200
    listed = _post(agent, {"type": "GET_CONTAINERS", "get_containers": {"show_standalone": True}}).json()
    assert any(c["container_id"]["value"] == "parent" for c in listed["get_containers"]["containers"])


def test_a_session_ends_with_its_command_not_with_what_it_left_running(agent: str) -> None:
    """A background process holding the session's output open dies when the command ends (Mesos destroys the
    nested container), so the session's stream ends then rather than when that process would."""
    answer = _post(agent, _session("s6", "sh", "-c", "sleep 300 & echo started"), accept=RECORDIO)
    assert answer.status_code == 200, answer.text
    records = [json.loads(r) for r in recordio.Decoder().feed(answer.content)]
    assert b"".join(base64.b64decode(r["data"]["data"]) for r in records) == b"started\n"


def test_attaching_follows_no_symlink_a_container_put_in_place_of_its_output(agent: str, tmp_path) -> None:
    """Attack: a container owns its sandbox; it swaps its `stdout` for a link to a file only root may read and
    asks the agent (root) to stream it. The agent opens the sandbox's files without following links."""
    secret = tmp_path / "root-only"
    secret.write_text("secret\n")
    secret.chmod(0o600)
    launched = _post(agent, {"type": "LAUNCH_CONTAINER", "launch_container": {
        "container_id": {"value": "swapper"}, "command": {
            "value": f"rm -f stdout; ln -s {secret} stdout; touch swapped; exec sleep 300", "user": "nobody"}}})
    assert launched.status_code == 200, launched.text
    work_dir = Path(requests.get(f"http://{agent}/flags", timeout=10).json()["flags"]["work_dir"])
    wait_until(lambda: (work_dir / "containers" / "swapper" / "swapped").exists(), 30,
               "the container to swap its stdout for a link")
    answer = _attach(agent, {"value": "swapper"})
    assert answer.status_code == 404 and "cannot be attached" in answer.text, answer.text
    assert "secret" not in answer.text
