"""Standalone and nested containers (the agent operator API's LAUNCH/WAIT/KILL/REMOVE_CONTAINER and the older
*_NESTED_CONTAINER calls): the same calls to a live Apache Mesos 1.12 agent and to ours (an agent running
processes), compared answer by answer, in JSON and protobuf. (Sessions, LAUNCH_NESTED_CONTAINER_SESSION, need
an I/O switchboard this real agent is not set up with: avmesos-cli's `task exec` is their proof.)

REMOVE_CONTAINER is not compared: Mesos 1.12's agent closes the connection without an answer when asked to
remove a standalone container that ended or that it does not know (measured), so there is nothing to match;
tests/security/test_standalone_containers.py covers ours.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import AGENT_OPERATOR, MediaType
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.scylla_home import scylla_home_at

from .operator_sequence import ONE_AGENT_RESOURCES
from .real_mesos import MesosProcess, encode_call, post

RESOURCES = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}},
             {"name": "mem", "type": "SCALAR", "scalar": {"value": 32}}]


@pytest.fixture(scope="module")
def our_process_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMesos]:
    """Our master with one agent that runs processes (no Docker), insecure like the real ones here; its work
    dir searchable by every user (0711, as /var/lib/mesos is), so that "nobody" reaches its sandbox."""
    work = tempfile.mkdtemp(prefix="scylla-standalone-")
    os.chmod(work, 0o711)
    with scylla_home_at(tmp_path_factory.mktemp("home")):
        cluster = EmbeddedMesos([{"resources": ONE_AGENT_RESOURCES}], simulate=False, use_docker=False,
                                insecure=True, work_dir=work).start()
        yield cluster
        cluster.stop()
    shutil.rmtree(work, ignore_errors=True)


def _container(cid: str, parent: str | dict[str, Any] | None = None) -> dict[str, Any]:
    if isinstance(parent, str):
        parent = {"value": parent}
    return {"value": cid, **({"parent": parent} if parent else {})}


def _launch(cid: str, command: str, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "LAUNCH_CONTAINER", "launch_container": {
        "container_id": _container(cid, parent), "command": {"value": command, "user": "nobody"},
        "resources": RESOURCES, **extra}}


def _nested(cid: str, parent: str | dict[str, Any], command: str, kind: str = "LAUNCH_CONTAINER") -> dict[str, Any]:
    """A nested container (no user: it runs as its parent's, in both)."""
    return {"type": kind, kind.lower(): {"container_id": _container(cid, parent), "command": {"value": command}}}


def _on(kind: str, cid: str, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": kind, kind.lower(): {"container_id": _container(cid, parent), **extra}}


def _sequence(tag: str) -> list[tuple[str, dict[str, Any]]]:
    ended, killed = f"ended-{tag}", f"killed-{tag}"
    return [
        ("launch", _launch(ended, "echo hi; exit 3")),
        ("launch again", _launch(ended, "echo hi; exit 3")),
        ("wait for its end", _on("WAIT_CONTAINER", ended)),
        ("wait again: read once", _on("WAIT_CONTAINER", ended)),
        ("kill an ended one", _on("KILL_CONTAINER", ended)),
        ("launch a long one", _launch(killed, "sleep 100")),
        ("kill it (SIGTERM asked)", _on("KILL_CONTAINER", killed, signal=15)),
        ("wait for it", _on("WAIT_CONTAINER", killed)),
        ("kill it again", _on("KILL_CONTAINER", killed)),
        ("an id with a slash", _launch("bad/id", "true")),
        ("an id with a dot", _launch("bad.id", "true")),
        ("reserved resources", {"type": "LAUNCH_CONTAINER", "launch_container": {
            "container_id": _container(f"reserved-{tag}"), "command": {"value": "true", "user": "nobody"},
            "resources": [{**RESOURCES[0], "reservations": [{"type": "DYNAMIC", "role": "r"}]}]}}),
        ("a parent that does not exist", _launch(f"child-{tag}", "true", parent=f"nobody-{tag}")),
        ("wait for an unknown one", _on("WAIT_CONTAINER", f"unknown-{tag}")),
        ("kill an unknown one", _on("KILL_CONTAINER", f"unknown-{tag}")),
    ]


def _nested_sequence(tag: str) -> list[tuple[str, dict[str, Any]]]:
    """Nested containers in a standalone parent (REMOVE of a running one is left out: Mesos answers it 500,
    ours 400, both refusing it with the same text)."""
    parent = f"parent-{tag}"
    return [
        ("launch the parent", _launch(parent, "sleep 200")),
        ("launch a nested one", _nested("n1", parent, "sleep 100")),
        ("launch it again", _nested("n1", parent, "sleep 100")),
        ("kill it (SIGTERM asked)", _on("KILL_CONTAINER", "n1", parent, signal=15)),
        ("wait for it (older name)", _on("WAIT_NESTED_CONTAINER", "n1", parent)),
        ("wait again: as often as asked", _on("WAIT_CONTAINER", "n1", parent)),
        ("kill it again (older name)", _on("KILL_NESTED_CONTAINER", "n1", parent)),
        ("remove it (older name)", _on("REMOVE_NESTED_CONTAINER", "n1", parent)),
        ("wait after the removal", _on("WAIT_CONTAINER", "n1", parent)),
        ("launch one that exits 4 (older name)", _nested("n2", parent, "exit 4", "LAUNCH_NESTED_CONTAINER")),
        ("wait for it", _on("WAIT_NESTED_CONTAINER", "n2", parent)),
        ("a parent that does not exist", _nested("n3", f"none-{tag}", "true")),
        ("a nested parent that does not exist", _nested("n4", _container("n9", parent), "true")),
        ("kill the parent", _on("KILL_CONTAINER", parent)),
        ("wait for the parent", _on("WAIT_CONTAINER", parent)),
        ("its nested ones went with it", _on("WAIT_CONTAINER", "n2", parent)),
    ]


def _answers(agent: str, media_type: MediaType, tag: str, sequence: Any = _sequence) -> list[tuple[str, int, Any]]:
    out = []
    for step, call in sequence(tag):
        status, _, body = post(agent, "/api/v1", encode_call(AGENT_OPERATOR, call, media_type),
                               {"Content-Type": media_type, "Accept": media_type}, timeout=60)
        if status == 200 and body:
            response = AGENT_OPERATOR.response()
            if media_type is MediaType.PROTOBUF:
                response.ParseFromString(body)
            else:
                codec.from_dict(response, json.loads(body))
            answer: Any = codec.to_dict(response)
        else:
            answer = body.decode().replace(tag, "<tag>")
        out.append((step, status, answer))
    return out


@pytest.mark.parametrize("media_type", [MediaType.JSON, MediaType.PROTOBUF])
def test_standalone_containers_are_answered_as_mesos_answers_them(
        real_agent: MesosProcess, our_process_agent: EmbeddedMesos, media_type: MediaType) -> None:
    tag = "j" if media_type is MediaType.JSON else "p"
    theirs = _answers(real_agent.address, media_type, tag)
    ours = _answers(our_process_agent.agent_addresses[0], media_type, tag)
    differing = [(t, o) for t, o in zip(theirs, ours) if t != o]
    assert not differing, differing
    assert [s for _, s, _ in ours] == [200, 202, 200, 404, 404, 200, 200, 200, 404, 400, 400, 400, 400, 404, 404]


@pytest.mark.parametrize("media_type", [MediaType.JSON, MediaType.PROTOBUF])
def test_nested_containers_are_answered_as_mesos_answers_them(
        real_agent: MesosProcess, our_process_agent: EmbeddedMesos, media_type: MediaType) -> None:
    tag = "nj" if media_type is MediaType.JSON else "np"
    theirs = _answers(real_agent.address, media_type, tag, _nested_sequence)
    ours = _answers(our_process_agent.agent_addresses[0], media_type, tag, _nested_sequence)
    differing = [(t, o) for t, o in zip(theirs, ours) if t != o]
    assert not differing, differing
    assert [s for _, s, _ in ours] == [200, 200, 202, 200, 200, 200, 404, 200, 404, 200, 200, 400, 400, 200, 200, 404]
