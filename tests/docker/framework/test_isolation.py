"""Jobs are isolated: a container of one job cannot reach another job's processes."""

from __future__ import annotations

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import proc_hostname
from tests.support.scylla_cli import REPO

PROBE = """
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    addr = socket.gethostbyname(host)
except OSError:
    print("noresolve"); sys.exit(0)
s = socket.socket(); s.settimeout(3)
try:
    s.connect((addr, port)); print("connected")
except OSError as exc:
    print("refused", exc)
"""


def _probe(container, host: str, port: int) -> str:
    code, out = container.exec_run(["python3", "-c", PROBE, host, str(port)])
    return out.decode().strip()


def test_a_container_cannot_reach_another_jobs_processes(scylla, tmp_path) -> None:
    confs = []
    for name in ("iso-a", "iso-b"):
        conf = tmp_path / f"{name}.conf"
        conf.write_text((REPO / "examples/frameworks/hogwild.conf").read_text()
                        .replace('name: "digits-hogwild"', f'name: "{name}"').replace("train_steps: 600", "train_steps: 100000"))
        confs.append(str(conf))
    p = scylla.start("run", "--agent-resources", "cpus:16;mem:8192", *confs)
    jobs = wait_until(lambda: len(ids := scylla.job_ids()) == 2 and ids, 60, "both jobs submitted")
    a, b = sorted(jobs)
    for job in (a, b):
        wait_until(lambda job=job: len([c for c in scylla.containers(job) if c.status == "running"]) == 3, 180,
                   f"{job}'s three containers")
        wait_until(lambda job=job: scylla.store().progress(job), 180, f"{job} training")
    mine = scylla.containers(a)[0]
    b_ip = scylla.containers(b)[0].attrs["NetworkSettings"]["Networks"]
    b_ip = next(iter(b_ip.values()))["IPAddress"]
    port = 6723
    assert _probe(mine, proc_hostname(a, 1), port) == "connected"          # own job: reachable by name
    assert _probe(mine, proc_hostname(b, 1), port) == "noresolve"          # other job: no name
    assert _probe(mine, b_ip, port).startswith("refused")                   # nor an address
    for job in (a, b):
        r = scylla.run("kill", job, timeout=30)
        assert r.returncode == 0, r.stderr
    p.wait(120)
    assert p.returncode == 1  # killed jobs are not a success
    for job in (a, b):
        assert scylla.store().load(job).state.value == "KILLED"
        scylla.assert_nothing_left(job)
