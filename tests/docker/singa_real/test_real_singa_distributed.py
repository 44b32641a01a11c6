"""Real SINGA across containers: ZooKeeper registration in the framework's order, progress, a lost
process restarting the gang from SINGA's own checkpoints."""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import docker
import pytest

from .real_singa import Gang, ZkNetwork, downpour4, reports, require_real_singa, wait_until


@pytest.fixture(scope="module")
def zk_net(docker_client: docker.DockerClient) -> Iterator[ZkNetwork]:
    require_real_singa(docker_client)
    net = ZkNetwork(docker_client)
    try:
        net.start()
        yield net
    finally:
        net.close()


class Intake:
    """A progress endpoint on the test network's gateway: keeps every POSTed report."""

    def __init__(self, address: str) -> None:
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer((address, 0), Handler)
        self.url = f"http://{address}:{self.server.server_address[1]}/progress"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def registered_as(stderr: str) -> list[int]:
    return [int(m) for m in re.findall(r"cluster\.cc:\d+\] proc #(\d+) -> ", stderr)]


def test_four_processes_register_in_the_frameworks_order_and_train(docker_client: docker.DockerClient,
                                                                    zk_net: ZkNetwork) -> None:
    intake = Intake(zk_net.gateway())
    gang = Gang(docker_client, downpour4(), 4, net=zk_net, env={"SCYLLA_PROGRESS_URL": intake.url})
    try:
        gang.start(order=[3, 2, 1, 0])   # the reverse of SINGA's ids: the wrapper must still get them right
        gang.expect({0: 0, 1: 0, 2: 0, 3: 0}, 240)
        for k in range(4):
            assert registered_as(gang.logs(k, stderr=True)) == [k]
        (final,) = reports(gang.logs(0), "FINAL")
        assert final["test_accuracy"] >= 0.9 and final["steps"] == 600
        posted = [p for p in intake.received if p["phase"] == "train"]
        assert [p["step"] for p in posted] == list(range(0, 600, 50))
        assert {p["task"] for p in posted} == {f"{gang.job}.proc-0.a1"}
        assert not any(reports(gang.logs(k), "FINAL") for k in (1, 2, 3))
    finally:
        gang.close()
        intake.close()


def test_a_killed_process_ends_the_gang_and_the_restart_resumes_from_the_newest_complete_step(
        docker_client: docker.DockerClient, zk_net: ZkNetwork) -> None:
    gang = Gang(docker_client, downpour4(train_steps=1000, checkpoint_freq=100, test_freq=250), 4, net=zk_net)
    checkpoints = gang.workspace / "checkpoint"
    try:
        gang.start()
        wait_until(lambda: (checkpoints / "step300-worker0").exists(), 180, "SINGA's step-300 checkpoint")
        gang.kill(3)                                           # a server process dies
        gang.expect({0: 3, 1: 3, 2: 3}, 90)
        assert "lost peer process 3" in gang.logs(0, stderr=True).strip().splitlines()[-1]
        newest = max(int(p.name[4:].split("-")[0]) for p in checkpoints.glob("step*-worker0"))
        real = (checkpoints / f"step{newest}-worker0").read_bytes()
        for name, data in ((f"step{newest + 100}-worker0", real[: len(real) // 3]),   # a write cut short
                           (f"step{newest + 100}-worker1", b"")):
            (checkpoints / name).write_bytes(data)
            os.chown(checkpoints / name, 1000, 1000)   # as SINGA (uid 1000) would have left it
        gang.remove_attempt()

        gang.start(order=[2, 0, 3, 1], extra=("-resume",))
        gang.expect({0: 0, 1: 0, 2: 0, 3: 0}, 240)
        err0 = gang.logs(0, stderr=True)
        assert f"-resume: from step {newest} (step{newest}-worker0, step{newest}-worker1)" in err0
        assert f"Load from checkpoint file /workspace/resume/attempt-2/step{newest}-worker0" in err0
        train = [p["step"] for p in reports(gang.logs(0), "PROGRESS") if p["phase"] == "train"]
        assert train[0] == newest and train[-1] == 950
        (final,) = reports(gang.logs(0), "FINAL")
        assert final["steps"] == 1000 and final["test_step"] == 750 and final["test_accuracy"] >= 0.9
        for k in range(4):
            assert registered_as(gang.logs(k, stderr=True)) == [k]
    finally:
        gang.close()
