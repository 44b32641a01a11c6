"""Real `singa` processes on 127.0.0.1 talking ZeroMQ: training, late starters, lost and missing peers."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from scylla_singa.common.waiting import Deadline, wait_until
from .rt_helpers import NPROCS, write_conf

SINGA = Path(__file__).resolve().parents[3] / ".venv" / "bin" / "singa"


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class Proc:
    k: int
    popen: subprocess.Popen
    out: Path
    err: Path

    def stdout(self) -> str:
        return self.out.read_text()

    def stderr(self) -> str:
        return self.err.read_text()


class Job:
    """The processes of one job, started as subprocesses; all are killed on close."""

    def __init__(self, conf: Path, tmp: Path, env: dict | None = None) -> None:
        self.conf, self.tmp = conf, tmp
        self.n = NPROCS[conf.stem] if conf.stem in NPROCS else None
        self.env = {**os.environ, **(env or {})}
        self.procs: dict[int, Proc] = {}

    def cluster(self, n: int) -> Path:
        path = self.tmp / "cluster.json"
        path.write_text(json.dumps({"job": "t", "nprocs": n, "procs": [
            {"id": k, "host": "127.0.0.1", "port": p} for k, p in enumerate(free_ports(n))]}))
        return path

    def start(self, k: int, cluster: Path, *extra: str) -> Proc:
        out, err = self.tmp / f"out-{k}.txt", self.tmp / f"err-{k}.txt"
        with open(out, "wb") as o, open(err, "wb") as e:
            popen = subprocess.Popen([str(SINGA), "-conf", str(self.conf), "-procs_id", str(k), "-cluster",
                                      str(cluster), *extra], stdout=o, stderr=e, env=self.env)
        self.procs[k] = Proc(k, popen, out, err)
        return self.procs[k]

    def wait(self, timeout: float) -> dict[int, int]:
        deadline = Deadline(timeout)
        return {k: p.popen.wait(max(0.1, deadline.left())) for k, p in self.procs.items()}

    def close(self) -> None:
        for p in self.procs.values():
            if p.popen.poll() is None:
                p.popen.kill()
                p.popen.wait(10)


@pytest.fixture()
def jobs():
    made: list[Job] = []
    yield made
    for job in made:
        job.close()


def final_of(proc: Proc) -> dict:
    line = next(line for line in proc.stdout().splitlines() if line.startswith("FINAL "))
    return json.loads(line[len("FINAL "):])


def test_allreduce_over_zeromq_with_a_late_peer(tmp_path: Path, digits_dir: Path, jobs) -> None:
    job = Job(write_conf(tmp_path, "allreduce", digits_dir, filename="allreduce.conf"), tmp_path)
    jobs.append(job)
    cluster = job.cluster(3)
    job.start(1, cluster)
    job.start(2, cluster)
    wait_until(lambda: "hosts workers" in job.procs[1].stderr(), 30, "process 1 to start")
    time.sleep(1.0)  # process 0 appears a second after its peers
    job.start(0, cluster)
    codes = job.wait(90)
    assert codes == {0: 0, 1: 0, 2: 0}, {k: p.stderr() for k, p in job.procs.items()}
    final = final_of(job.procs[0])
    assert final["steps"] == 600 and final["test_accuracy"] >= 0.9
    for k in (1, 2):
        assert "FINAL" not in job.procs[k].stdout()
        assert '"step": 600' in job.procs[k].stdout()


@pytest.mark.parametrize("victim,how", [(3, signal.SIGKILL), (1, signal.SIGTERM)], ids=["server-killed", "worker-terminated"])
def test_a_lost_peer_makes_every_other_process_exit_nonzero_in_bounded_time(tmp_path: Path, digits_dir: Path, jobs,
                                                                            victim: int, how) -> None:
    conf = write_conf(tmp_path, "sandblaster", digits_dir, filename="sandblaster.conf", train_steps=100000,
                      disp_freq=20)
    job = Job(conf, tmp_path, env={"SCYLLA_PEER_TIMEOUT": "3"})
    jobs.append(job)
    cluster = job.cluster(5)
    for k in range(5):
        job.start(k, cluster)
    wait_until(lambda: '"step": 100' in job.procs[0].stdout(), 60, "step 100")
    os.kill(job.procs[victim].popen.pid, how)
    killed = time.monotonic()
    survivors = [k for k in range(5) if k != victim]
    codes = {k: job.procs[k].popen.wait(3 + 10) for k in survivors}
    assert set(codes.values()) == {3}, {k: job.procs[k].stderr() for k in survivors}
    for k in survivors:
        # Each names the peer it lost first: the victim, or a survivor that already gave up on the victim
        # (losses cascade: a server whose only partner exited may notice that before it notices the victim).
        named = re.search(r"process (\d+) \(127\.0\.0\.1:", job.procs[k].stderr())
        assert named and int(named[1]) in {victim, *survivors} - {k}, (k, job.procs[k].stderr())
    assert any(f"process {victim} (127.0.0.1:" in job.procs[k].stderr() for k in survivors)
    assert time.monotonic() - killed < 3 + 10
    if how == signal.SIGTERM:
        assert job.procs[victim].popen.wait(10) == 1
        assert "terminated (SIGTERM)" in job.procs[victim].stderr()


def test_a_peer_that_never_appears_is_named_and_exits_3(tmp_path: Path, digits_dir: Path, jobs) -> None:
    job = Job(write_conf(tmp_path, "hogwild", digits_dir, filename="hogwild.conf"), tmp_path)
    jobs.append(job)
    cluster = job.cluster(3)
    job.start(0, cluster, "-startup_timeout", "2")
    job.start(1, cluster, "-startup_timeout", "2")
    codes = job.wait(30)
    assert codes == {0: 3, 1: 3}
    ports = json.loads(cluster.read_text())["procs"]
    assert f"peers never appeared within 2s: process 2 (127.0.0.1:{ports[2]['port']})" in job.procs[0].stderr()
