"""The v1 operator API (POST /api/v1) of our master and agent, in JSON and protobuf.

Every read-only call answers in the format asked, decodes into our .proto
Response with no unknown field, and says what the master knows; SUBSCRIBE
streams SUBSCRIBED, HEARTBEAT and an event per change (frameworks, tasks,
agents) with the shapes a real Mesos 1.12 sent (the recorded stream);
calls that change state do what they say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import AGENT_OPERATOR, MASTER_OPERATOR, MediaType
from tests.apache_mesos import flows
from tests.apache_mesos.real_mesos import EventStream, operator_call, unknown_fields
from tests.support.json_shapes import shape_differences
from tests.support.mesos_framework import TestFramework, task_info

RECORDED_EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "apache_mesos" / "operator" / "SUBSCRIBE.events.json"
AGENT_CALLS = ("GET_HEALTH", "GET_FLAGS", "GET_VERSION", "GET_METRICS", "GET_LOGGING_LEVEL", "GET_STATE",
               "GET_CONTAINERS", "GET_FRAMEWORKS", "GET_EXECUTORS", "GET_TASKS", "GET_AGENT", "GET_OPERATIONS",
               "GET_RESOURCE_PROVIDERS")
FREE = frozenset({"*/framework_info", "*/statistics"})


@pytest.fixture
def busy(cluster):
    """A master with one process agent and a framework running one task."""
    m = cluster([{"resources": "cpus:2;mem:2048;disk:1024;ports:[31000-32000]"}], simulate=False, use_docker=False)
    f = TestFramework(m.master_address, name="operator").start()
    offer = f.take_offer()
    task = task_info(offer["agent_id"], command="sleep 600")
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    yield m, f, task
    f.stop()


@pytest.mark.parametrize("media_type", [MediaType.PROTOBUF, MediaType.JSON], ids=["protobuf", "json"])
def test_every_read_only_master_call_answers_completely(busy, media_type: MediaType) -> None:
    m, f, task = busy
    for kind in flows.READ_ONLY_MASTER_CALLS:
        response, _ = operator_call(m.master_address, MASTER_OPERATOR, flows.operator_body(MASTER_OPERATOR, kind),
                                    media_type)
        assert codec.to_dict(response)["type"] == kind
        assert list(unknown_fields(response)) == [], kind
    state, _ = operator_call(m.master_address, MASTER_OPERATOR, {"type": "GET_STATE"}, media_type)
    (running,) = state.get_state.get_tasks.tasks
    assert (running.task_id.value, running.agent_id.value) == (task["task_id"]["value"], task["agent_id"]["value"])
    assert [fw.framework_info.id.value for fw in state.get_state.get_frameworks.frameworks] == [f.id]
    (agent,) = state.get_state.get_agents.agents
    assert agent.pid.startswith("slave(1)@127.0.0.1:") and agent.active


@pytest.mark.parametrize("media_type", [MediaType.PROTOBUF, MediaType.JSON], ids=["protobuf", "json"])
def test_every_read_only_agent_call_answers_completely(busy, media_type: MediaType) -> None:
    m, f, task = busy
    agent = m.agent_addresses[0]
    for kind in AGENT_CALLS:
        response, _ = operator_call(agent, AGENT_OPERATOR, flows.operator_body(AGENT_OPERATOR, kind), media_type)
        assert codec.to_dict(response)["type"] == kind
        assert list(unknown_fields(response)) == [], kind
    tasks, _ = operator_call(agent, AGENT_OPERATOR, {"type": "GET_TASKS"}, media_type)
    assert [t.task_id.value for t in tasks.get_tasks.launched_tasks] == [task["task_id"]["value"]]
    containers, _ = operator_call(agent, AGENT_OPERATOR, {"type": "GET_CONTAINERS"}, media_type)
    (container,) = containers.get_containers.containers
    assert container.resource_statistics.mem_rss_bytes > 0


def test_what_an_agent_does_not_run_is_answered_501_with_the_reason(busy, cluster) -> None:
    """Resource providers are not offered by our agents; a simulated agent runs no container at all, so it
    has no output to attach to either. Each says so (the containers they do run: nested ones in
    tests/mesos/test_container_sessions.py and tests/compat/test_task_exec.py, standalone ones in
    tests/security/test_standalone_containers.py, both compared with Mesos in tests/apache_mesos; attaching to
    a container's output in tests/mesos/test_container_sessions.py and tests/compat/test_task_attach.py)."""
    m, _, _ = busy
    agent = m.agent_addresses[0]
    containers, _ = operator_call(agent, AGENT_OPERATOR, {"type": "GET_CONTAINERS"}, MediaType.JSON)
    task_container = {"value": containers.get_containers.containers[0].container_id.value}
    provider = {"type": "ADD_RESOURCE_PROVIDER_CONFIG", "add_resource_provider_config": {"info": {
        "type": "org.apache.mesos.rp.local.storage", "name": "lvm"}}}
    answer = requests.post(f"http://{agent}/api/v1", json=provider, timeout=10)
    assert answer.status_code == 501 and "no resource providers" in answer.text, answer.text
    pruned = requests.post(f"http://{agent}/api/v1", json={"type": "PRUNE_IMAGES"}, timeout=10)
    assert (pruned.status_code, pruned.text) == (200, ""), pruned.text   # nothing of ours to prune, as in Mesos
    simulated = cluster(1).agent_addresses[0]
    standalone = {"container_id": {"value": "c1"}, "command": {"value": "true", "user": "nobody"}}
    answer = requests.post(f"http://{simulated}/api/v1", json={"type": "LAUNCH_CONTAINER",
                                                               "launch_container": standalone}, timeout=10)
    assert answer.status_code == 501 and "a simulated agent runs no processes" in answer.text, answer.text
    attach = {"type": "ATTACH_CONTAINER_OUTPUT", "attach_container_output": {"container_id": task_container}}
    answer = requests.post(f"http://{simulated}/api/v1", json=attach, headers={"Accept": "application/recordio"},
                           timeout=10)
    assert answer.status_code == 501 and "a simulated agent runs no processes" in answer.text, answer.text


@pytest.mark.parametrize("media_type", [MediaType.PROTOBUF, MediaType.JSON], ids=["protobuf", "json"])
def test_agent_lists_and_reads_sandbox_files_and_nothing_else(busy, media_type: MediaType, tmp_path: Path) -> None:
    """LIST_FILES and READ_FILE on the agent: a sandbox's entries as FileInfo, a file's bytes from an offset with
    its size; outside the sandboxes (or missing) is 404 in Mesos's words, revealing nothing; a directory read
    or a file listed is a 400 that says which call to use."""
    m, _, task = busy
    agent = m.agent_addresses[0]
    state = requests.get(f"http://{agent}/state", timeout=10).json()
    sandbox = next(e["directory"] for fw in state["frameworks"] for e in fw["executors"]
                   if e["id"] == task["task_id"]["value"])
    Path(sandbox, "notes.txt").write_bytes(b"0123456789")
    listed, _ = operator_call(agent, AGENT_OPERATOR, {"type": "LIST_FILES", "list_files": {"path": sandbox}}, media_type)
    infos = {Path(i.path).name: i for i in listed.list_files.file_infos}
    assert {"notes.txt", "stdout", "stderr"} <= set(infos), sorted(infos)
    notes = infos["notes.txt"]
    assert notes.size == 10 and notes.mode & 0o170000 == 0o100000 and notes.mtime.nanoseconds > 0
    read, _ = operator_call(agent, AGENT_OPERATOR, {"type": "READ_FILE", "read_file": {
        "path": f"{sandbox}/notes.txt", "offset": 3, "length": 4}}, media_type)
    assert (read.read_file.size, read.read_file.data) == (10, b"3456")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for callers")
    Path(sandbox, "leak").symlink_to(secret)   # a task's symlink out of its sandbox is not followed
    for path in (str(secret), "/etc/passwd", f"{sandbox}/missing", f"{sandbox}/../../../../../../etc/passwd",
                 f"{sandbox}/leak"):
        answer = requests.post(f"http://{agent}/api/v1", json={"type": "READ_FILE", "read_file": {
            "path": path, "offset": 0}}, timeout=10)
        assert (answer.status_code, answer.text) == (404, f"No file or directory found at path '{path}'"), path
    as_file = requests.post(f"http://{agent}/api/v1", json={"type": "READ_FILE", "read_file": {
        "path": sandbox, "offset": 0}}, timeout=10)
    assert as_file.status_code == 400 and "LIST_FILES" in as_file.text, as_file.text
    as_dir = requests.post(f"http://{agent}/api/v1", json={"type": "LIST_FILES", "list_files": {
        "path": f"{sandbox}/notes.txt"}}, timeout=10)
    assert as_dir.status_code == 400 and "READ_FILE" in as_dir.text, as_dir.text


def test_agent_set_logging_level_raises_it_for_the_duration(busy) -> None:
    m, _, _ = busy
    agent = m.agent_addresses[0]

    def level() -> int:
        answer, _ = operator_call(agent, AGENT_OPERATOR, {"type": "GET_LOGGING_LEVEL"}, MediaType.JSON)
        return answer.get_logging_level.level
    assert level() == 0
    answer = requests.post(f"http://{agent}/api/v1", json={"type": "SET_LOGGING_LEVEL", "set_logging_level": {
        "level": 1, "duration": {"nanoseconds": 1_000_000_000}}}, timeout=10)
    assert (answer.status_code, answer.text) == (200, ""), answer.text
    assert level() == 1
    wait_until(lambda: level() == 0, 10, "the level to come back after the duration")


def test_operator_subscribe_streams_the_changes_in_mesos_shapes(cluster) -> None:
    m = cluster([{"resources": "cpus:2;mem:2048;disk:1024;ports:[31000-32000]"}], simulate=False, use_docker=False,
                heartbeat_interval=0.5)
    stream = EventStream(m.master_address, "/api/v1", MASTER_OPERATOR, {"type": "SUBSCRIBE"}, MediaType.JSON)
    try:
        assert stream.status == 200 and stream.headers["Content-Type"] == "application/json"
        f = TestFramework(m.master_address, name="watched").start()
        offer = f.take_offer()
        # as the recorded tasks: labels, a container (MESOS: a plain process here) and a kill policy
        task = task_info(offer["agent_id"], command="exit 0", grace_s=3, extra={
            "container": {"type": "MESOS"}, "labels": {"labels": [{"key": "watched", "value": "1"}]}})
        f.launch(offer, [task])
        f.wait_state(task["task_id"]["value"], "TASK_FINISHED")
        f.stop()
        seen: dict[str, list[dict[str, Any]]] = {}
        wanted = ["SUBSCRIBED", "HEARTBEAT", "FRAMEWORK_ADDED", "TASK_ADDED", "TASK_UPDATED", "FRAMEWORK_REMOVED"]
        for kind in wanted:
            _, record = stream.next_of(kind, 10)
            seen.setdefault(kind, []).append(json.loads(record))
        recorded: dict[str, list[dict[str, Any]]] = {}
        for entry in json.loads(RECORDED_EVENTS.read_text())["events"]:
            recorded.setdefault(entry["event"]["type"], []).append(entry["event"])
        for kind in wanted:
            assert shape_differences(seen[kind], recorded[kind], FREE, {
                "*/master_info:capabilities": "no master capability advertised",
                "*/container_status:network_infos": "a process task's starting status has none here",
                "*/container:docker": "DockerInfo is there for DOCKER containers; this task has a MESOS one",
                "*/container:network_infos": "the recorded tasks asked for a USER network",
            }) == [], kind
    finally:
        stream.close()


def test_operator_subscribe_in_protobuf_reports_agents_coming_and_going(cluster) -> None:
    m = cluster(1, heartbeat_interval=0.5)
    stream = EventStream(m.master_address, "/api/v1", MASTER_OPERATOR, {"type": "SUBSCRIBE"}, MediaType.PROTOBUF)
    try:
        subscribed, _ = stream.next_of("SUBSCRIBED", 10)
        assert len(subscribed.subscribed.get_state.get_agents.agents) == 1
        agent_id = subscribed.subscribed.get_state.get_agents.agents[0].agent_info.id.value
        answer = requests.post(f"http://{m.master_address}/api/v1", timeout=10,
                               json={"type": "MARK_AGENT_GONE", "mark_agent_gone": {"agent_id": {"value": agent_id}}})
        assert answer.status_code == 200 and answer.content == b"", answer.text
        removed, _ = stream.next_of("AGENT_REMOVED", 10)
        assert removed.agent_removed.agent_id.value == agent_id
        added, _ = stream.next_of("AGENT_ADDED", 10)   # it registers again as a new agent
        assert added.agent_added.agent.agent_info.id.value != agent_id
        stream.next_of("HEARTBEAT", 10)
    finally:
        stream.close()


def test_operator_calls_that_change_the_master(busy) -> None:
    m, f, task = busy
    url = f"http://{m.master_address}/api/v1"
    agent_id = task["agent_id"]

    def call(body: dict[str, Any]) -> requests.Response:
        return requests.post(url, json=body, timeout=10)

    assert call({"type": "UPDATE_WEIGHTS", "update_weights": {"weight_infos": [{"role": "a", "weight": 2.5}]}}
                ).status_code == 200   # Mesos answers the calls that change something 200 OK
    weights = call({"type": "GET_WEIGHTS"}).json()["get_weights"]["weight_infos"]
    assert weights == [{"role": "a", "weight": 2.5}]
    assert call({"type": "UPDATE_WEIGHTS", "update_weights": {"weight_infos": [{"role": "a", "weight": -1}]}}
                ).status_code == 400
    assert call({"type": "DEACTIVATE_AGENT", "deactivate_agent": {"agent_id": agent_id}}).status_code == 200
    assert requests.get(f"http://{m.master_address}/master/slaves", timeout=10).json()["slaves"][0]["deactivated"]
    assert call({"type": "REACTIVATE_AGENT", "reactivate_agent": {"agent_id": agent_id}}).status_code == 200
    refused = call({"type": "GROW_VOLUME", "grow_volume": {"agent_id": agent_id, "volume": {
        "name": "disk", "type": "SCALAR", "scalar": {"value": 1}}, "addition": {
        "name": "disk", "type": "SCALAR", "scalar": {"value": 1}}}})
    assert refused.status_code == 400 and "does not have DiskInfo" in refused.text
    gone = call({"type": "TEARDOWN", "teardown": {"framework_id": {"value": "no-such"}}})
    assert (gone.status_code, gone.text) == (400, "Unknown framework no-such")
    assert call({"type": "TEARDOWN", "teardown": {"framework_id": {"value": f.id}}}).status_code == 200
    state = requests.get(f"http://{m.master_address}/master/frameworks", timeout=10).json()
    assert [x["id"] for x in state["completed_frameworks"]] == [f.id] and state["frameworks"] == []
