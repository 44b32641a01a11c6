"""Persistent volumes with real Docker tasks: what one container (a non-root user) writes to its volumes, at a
path in its sandbox and at an absolute path, the next container reads; DESTROY_VOLUMES removes the data.
The volumes are made through the operator API as an operator would, on a secure (default) cluster."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.mesos_framework import TestFramework, task_info

TINY = "scylla-tiny:latest"   # USER 65534


def _reserved_disk(size: float, **fields: Any) -> dict[str, Any]:
    return {"name": "disk", "type": "SCALAR", "scalar": {"value": size},
            "reservations": [{"type": "DYNAMIC", "role": "ml"}], **fields}


def _volume(volume_id: str, path: str, size: float) -> dict[str, Any]:
    return _reserved_disk(size, disk={"persistence": {"id": volume_id},
                                      "volume": {"mode": "RW", "container_path": path}})


VOLUMES = [_volume("ckpt", "checkpoints", 32), _volume("data", "/data", 32)]


@pytest.fixture(scope="module")
def mesos(docker_client) -> Iterator[EmbeddedMesos]:
    with EmbeddedMesos([{"resources": "cpus:2;mem:1024;disk:200;ports:[31000-31100]"}], docker_client=docker_client,
                       allocation_interval=0.2, retry_interval=0.5) as m:
        yield m


def _operator(m: EmbeddedMesos, kind: str, key: str, items: list[dict]) -> requests.Response:
    agent_id = m.agents[0].agent_id
    return requests.post(f"http://{m.master_address}/api/v1", timeout=10, auth=m.http_auth,
                         json={"type": kind, kind.lower(): {"agent_id": {"value": agent_id}, key: items}})


def _run(fw: TestFramework, command: str) -> dict[str, Any]:
    offer = fw.take_offer(lambda o: sum(1 for r in o["resources"] if r.get("disk")) == 2, timeout=20)
    plain = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}},
             {"name": "mem", "type": "SCALAR", "scalar": {"value": 32}}]
    task = task_info(offer["agent_id"], command=command, image=TINY, resources=plain + VOLUMES)
    fw.launch(offer, [task])
    return fw.wait_state(task["task_id"]["value"], ("TASK_FINISHED", "TASK_FAILED", "TASK_ERROR", "TASK_LOST"),
                         timeout=60)


def test_a_container_reads_what_the_one_before_wrote_to_its_volumes(mesos) -> None:
    assert _operator(mesos, "RESERVE_RESOURCES", "resources", [_reserved_disk(100)]).status_code == 202
    created = _operator(mesos, "CREATE_VOLUMES", "volumes", VOLUMES)
    assert (created.status_code, created.text) == (202, "")
    fw = TestFramework(mesos.master_address, name="volumes", role="ml", credential=mesos.framework_credential).start()
    try:
        # It reaches the volume in its sandbox, and still cannot list or write the sandbox itself.
        wrote = _run(fw, "echo step-7 > $MESOS_SANDBOX/checkpoints/latest && echo seen > /data/x && "
                         "! ls $MESOS_SANDBOX 2>/dev/null && ! touch $MESOS_SANDBOX/out 2>/dev/null")
        assert wrote["state"] == "TASK_FINISHED", wrote.get("message")
        read = _run(fw, 'test "$(cat $MESOS_SANDBOX/checkpoints/latest)$(cat /data/x)" = step-7seen')
        assert read["state"] == "TASK_FINISHED", read.get("message")
    finally:
        fw.stop()
    roles = mesos.work_dir / "agent-0" / "volumes" / "roles" / "ml"
    assert (roles / "ckpt" / "latest").read_text() == "step-7\n"
    assert (roles / "ckpt").stat().st_uid == 65534 and (roles / "data").stat().st_uid == 65534

    destroyed = _operator(mesos, "DESTROY_VOLUMES", "volumes", VOLUMES)
    assert (destroyed.status_code, destroyed.text) == (202, "")
    wait_until(lambda: not (roles / "ckpt").exists() and not (roles / "data").exists(), 10,
               "the agent to remove both volumes and their data")
