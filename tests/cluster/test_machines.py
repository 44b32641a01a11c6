"""From separate machines to a cluster with the README's commands: `cluster init`, `join`, `status`, `leave`.

Four "machines" (tests/support/machines.py): each its own network namespace
and address, Docker engine (in no swarm at first), hostname and
SCYLLA_HOME; they reach each other only through their addresses. `init`
runs on vm1 (two masters electing through ZooKeeper, HDFS), the join line it
prints runs as printed on vm2 and
vm3; vm4 stays outside for the refused tokens. The tests run in file order
on the one cluster: a job across the three, a killed agent, a machine
leaving while a job runs elsewhere, and the teardown, after which nothing of
the cluster may be left on any machine.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
import requests

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.join_token import decode, encode
from scylla_singa.cluster.up_down import down, up
from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import Credential
from tests.support.job_confs import EXAMPLES, conf_with
from tests.support.machines import Machine
from tests.support.scylla_cli import last_json
from .cluster_helpers import assert_clean, free_subnet_pair, unique_prefix

pytestmark = [pytest.mark.cluster, pytest.mark.docker]

DOWNPOUR = EXAMPLES / "frameworks" / "downpour.conf"     # 6 processes
HOGWILD = EXAMPLES / "frameworks" / "hogwild.conf"       # 3 processes
IMAGES = ("singa-py:latest", "scylla-hdfs:latest", "scylla-zookeeper:latest", "scylla-tiny:latest")


@dataclasses.dataclass
class VmCluster:
    machines: list[Machine]
    join_line: str
    init_out: str
    tmp: Path

    def vm(self, n: int) -> Machine:
        return self.machines[n - 1]

    def status(self, n: int) -> dict:
        r = self.vm(n).run("cluster", "status", "--json")
        assert r.returncode in (0, 3), r.stderr[-2000:]
        return json.loads(r.stdout)

    def agent_child_pid(self, n: int) -> int | None:
        path = self.vm(n).home / "machine" / "run" / "agent.child.pid"
        try:
            return int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None


def _machine_rows(report: dict) -> dict[str, dict]:
    return {m["name"]: m for m in report["machines"]}


@pytest.fixture(scope="module")
def vms(host_engine: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VmCluster]:
    tmp = tmp_path_factory.mktemp("machines")
    lan, svc = free_subnet_pair(host_engine)
    config = ClusterConfig(nodes=4, agents=False, swarm=False, prefix=unique_prefix("m"), subnet=lan,
                           services_subnet=svc, images=IMAGES, home=str(tmp / "host-home"))
    machines = [Machine(f"vm{s.index}", s, tmp / f"vm{s.index}-home") for s in config.node_specs()]
    try:
        up(config, echo=lambda _: None)
        init = machines[0].run("cluster", "init", "--zk", "--hdfs", "--masters", "2", timeout=600)
        assert init.returncode == 0, init.stdout[-3000:] + init.stderr[-3000:]
        line = next(x.strip() for x in init.stdout.splitlines() if x.strip().startswith("scylla-singa cluster join"))
        vc = VmCluster(machines, line, init.stdout, tmp)
        for m in machines[1:3]:
            joined = m.run_line(line)
            assert joined.returncode == 0, joined.stdout[-3000:] + joined.stderr[-3000:]
            assert f"joined cluster 'scylla' as {m.name}" in joined.stdout
        yield vc
    finally:
        for m in reversed(machines):   # whatever a failed test left: members first, the first machine last
            if (m.home / "machine" / "member.json").exists():
                m.run("cluster", "leave", "--force", "--drain-timeout", "30s")
        down(config, echo=lambda _: None)
        assert_clean(config, host_engine)


def test_init_prints_the_join_line_and_the_ports_and_status_lists_every_machine(vms: VmCluster) -> None:
    assert "Open these ports to the cluster's machines only" in vms.init_out and "2377/tcp" in vms.init_out
    assert re.fullmatch(rf"scylla-singa cluster join --token scylla-join1\.\S+ {vms.vm(1).address}:5050",
                        vms.join_line), vms.join_line
    for n in (1, 3):   # from the first machine and from a member
        report = vms.status(n)
        rows = _machine_rows(report)
        assert sorted(rows) == ["vm1", "vm2", "vm3"], report
        assert all(r["health"] == "ok" for r in rows.values()), report
        assert rows["vm1"]["role"].startswith("first:") and rows["vm2"]["role"] == "member: agent", report
        assert rows["vm3"]["address"] == vms.vm(3).address
    first = vms.status(1)
    assert _machine_rows(first)["vm1"]["role"] == "first: master-1, master-2, zookeeper, hdfs, agent", first
    assert first["master"] == f"zk://{vms.vm(1).address}:2181/mesos", first
    refused = vms.vm(1).run("cluster", "leave")   # the first machine goes last
    assert refused.returncode == 1 and "2 other machine(s) are still members" in refused.stderr, refused.stderr
    assert vms.status(1)["status"] == "member"
    # The cluster is authenticated: the master and the agents refuse an anonymous caller.
    assert requests.get(f"http://{vms.vm(1).address}:5050/master/slaves", timeout=10).status_code == 401
    assert requests.get(f"http://{vms.vm(2).address}:5051/state", timeout=10).status_code == 401


def test_hdfs_which_has_no_authentication_answers_only_the_clusters_machines(vms: VmCluster) -> None:
    first = vms.vm(1).address
    for port in (9870, 8020, 9864, 2181):
        assert vms.vm(2).reaches(first, port) and vms.vm(3).reaches(first, port), port
        assert not vms.vm(4).reaches(first, port), f"port {port} answers a machine outside the cluster"
    try:   # nor the host, which is on the same network but no member
        requests.get(f"http://{first}:9870/webhdfs/v1/?op=LISTSTATUS", timeout=3)
        raise AssertionError("WebHDFS answered the host, which is no member")
    except requests.ConnectionError:
        pass
    assert vms.vm(4).reaches(first, 5050) and vms.vm(4).reaches(first, 5060)   # masters: authenticated, open


def test_a_six_process_job_goes_through_hdfs_and_runs_across_the_three_machines(vms: VmCluster) -> None:
    r = vms.vm(1).run("run", "--image", "singa-py:latest", "--json", str(DOWNPOUR), timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 0, out
    assert sorted(p["id"] for p in out["procs"]) == list(range(6)), out
    assert {p["agent"] for p in out["procs"]} == {"vm1", "vm2", "vm3"}, out
    assert "using the local cluster's master" in r.stderr, r.stderr[-2000:]
    for m in vms.machines[:3]:   # the job's containers and overlay are gone from every engine
        c = m.engine()
        try:
            assert c.containers.list(all=True, filters={"label": "scylla.job"}) == []
        finally:
            c.close()


def test_volume_delivery_is_refused_where_the_machines_share_no_files(vms: VmCluster) -> None:
    r = vms.vm(1).run("run", "--image", "singa-py:latest", "--deliver", "volume", str(HOGWILD))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "do not see this machine's files" in r.stderr and "--deliver hdfs" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_wrong_damaged_and_expired_tokens_are_refused_before_anything_changes(vms: VmCluster) -> None:
    vm4 = vms.vm(4)
    words = vms.join_line.split()
    text, first = words[4], words[5]
    good = decode(text, time.time())
    cases = {
        "damaged": (text[:-20], "the join token is damaged"),
        "not a token": ("SWMTKN-1-abc", "this is not a scylla-singa join token"),
        "expired": (encode(dataclasses.replace(good, expires_at=time.time() - 7200)), "expired 2.0 h ago"),
        "wrong secret": (encode(dataclasses.replace(good, agent=Credential(good.agent.principal, "guessed"))),
                         "refused the token's credential"),
    }
    for what, (token, message) in cases.items():
        r = vm4.run("cluster", "join", "--token", token, first)
        assert r.returncode == 1 and message in r.stderr, (what, r.stdout + r.stderr)
        assert "Traceback" not in r.stderr, (what, r.stderr)
        assert vm4.leftovers() == [], (what, vm4.leftovers())
    # A token made before `cluster token --rotate` passes the master (same credential) but not the swarm
    # manager: the join is undone and says why.
    fresh = vms.vm(1).run("cluster", "token", "--rotate", "--ttl", "10m")
    assert fresh.returncode == 0 and fresh.stdout.startswith("scylla-singa cluster join --token "), fresh.stderr
    r = vm4.run_line(vms.join_line)
    assert r.returncode == 1 and "refused this machine" in r.stderr and "undoing what was made" in r.stdout, \
        r.stdout + r.stderr
    assert vm4.leftovers() == [], vm4.leftovers()
    rows = _machine_rows(vms.status(1))
    assert sorted(rows) == ["vm1", "vm2", "vm3"]


def test_a_killed_agent_is_restarted_by_its_supervisor_and_is_offered_again(vms: VmCluster) -> None:
    before = vms.agent_child_pid(2)
    assert before is not None
    os.kill(before, signal.SIGKILL)
    wait_until(lambda: vms.agent_child_pid(2) not in (None, before), 60, "the supervisor to restart vm2's agent")
    wait_until(lambda: all(r["health"] == "ok" for r in vms.status(1)["machines"])
               and "vm2" in _machine_rows(vms.status(1)), 90, "vm2's agent back and active in the master",
               interval_s=1.0)
    # Offered again: spread puts one of Hogwild's three processes on each machine, vm2 included.
    r = vms.vm(1).run("run", "--image", "singa-py:latest", "--policy", "spread", "--json", str(HOGWILD), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["restarts"] == 0, out
    assert sorted(p["agent"] for p in out["procs"]) == ["vm1", "vm2", "vm3"], out
    log = (vms.vm(2).home / "machine" / "run" / "agent.log").read_text()
    assert "exited with -9" in log, log[-2000:]


def _policy(vms: VmCluster, name: str, hostnames: str) -> Path:
    path = vms.tmp / f"{name}.yaml"
    path.write_text(f"name: {name}\norder: largest-first\nfilters: [resources-fit]\n"
                    f"scores: [{{name: spread, weight: 10}}]\nconstraints:\n  hostnames: {hostnames}\n")
    return path


def _long_job(vms: VmCluster, name: str, policy: Path):
    conf = vms.tmp / f"{name}.conf"
    conf.write_text(conf_with((EXAMPLES / "digits-mlp" / "job.conf").read_text(), name=f'"{name}"')
                    .replace("train_steps: 600", "train_steps: 6000"))
    out_file = vms.tmp / f"{name}.out"
    job = vms.vm(1).start(out_file, "run", "--image", "singa-py:latest", "--policy", str(policy), "--json", str(conf))

    def placed() -> str | None:
        assert job.poll() is None, out_file.with_suffix(".err").read_text()[-3000:]
        busy = [name for name, r in _machine_rows(vms.status(1)).items()
                if r["detail"].startswith("cpus ") and not r["detail"].startswith("cpus 0/")]
        return busy[0] if len(busy) == 1 else None
    return job, out_file, placed


def _leave(m: Machine) -> str:
    r = m.run("cluster", "leave")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "draining agent" in r.stdout and "left the swarm" in r.stdout, r.stdout
    assert m.leftovers() == [], m.leftovers()
    return r.stdout


def test_leaving_drains_the_machine_and_its_job_restarts_on_another(vms: VmCluster) -> None:
    job, out_file, placed = _long_job(vms, "drained", _policy(vms, "not-first", "{exclude: [vm1]}"))
    try:
        where = wait_until(placed, 120, "the job's process to start", interval_s=1.0)
        assert where in ("vm2", "vm3")
        _leave(vms.vm(int(where[2:])))
        job.wait(600)
    finally:
        if job.poll() is None:
            job.kill()
    result = last_json(out_file.read_text())
    assert job.returncode == 0 and result["state"] == "FINISHED" and result["test_accuracy"] >= 0.90, result
    status = vms.vm(1).run("status", "--json", result["job"])
    assert status.returncode == 0, status.stderr
    reasons = json.loads(status.stdout)["restart_reasons"]
    assert result["restarts"] == 1 and len(reasons) == 1 and f"on {where}" in reasons[0], (result, reasons)
    other = ({"vm2", "vm3"} - {where}).pop()
    assert result["procs"][0]["agent"] == other, result
    wait_until(lambda: (rows := _machine_rows(vms.status(1))).get(where, {"role": "left"})["role"].startswith("left")
               and all(r["health"] == "ok" for r in rows.values()), 60,
               f"the first machine's status to show {where} as left", interval_s=1.0)


def test_a_machine_leaves_while_a_job_runs_elsewhere_and_the_job_is_unaffected(vms: VmCluster) -> None:
    members = [m for m in vms.machines[1:3] if (m.home / "machine" / "member.json").exists()]
    assert len(members) == 1, [m.name for m in members]
    job, out_file, placed = _long_job(vms, "elsewhere", _policy(vms, "first-only", "{include: [vm1]}"))
    try:
        assert wait_until(placed, 120, "the job's process to start", interval_s=1.0) == "vm1"
        _leave(members[0])
        assert job.poll() is None, "the job ended when another machine left"
        job.wait(600)
    finally:
        if job.poll() is None:
            job.kill()
    result = last_json(out_file.read_text())
    assert job.returncode == 0 and result["state"] == "FINISHED" and result["restarts"] == 0, result
    assert result["procs"][0]["agent"] == "vm1", result
    # Only vm1 is a member now; the machines that left may still be listed, as left, by their swarm nodes
    # (named after their engines' hostnames here), until `docker node rm`.
    def only_vm1() -> bool:
        rows = _machine_rows(vms.status(1))
        return rows["vm1"]["health"] == "ok" and all(r["role"].startswith("left") for n, r in rows.items()
                                                     if n != "vm1")
    wait_until(only_vm1, 60, "the first machine's status to show every other machine as left", interval_s=1.0,
               explain=lambda: str(vms.status(1)["machines"]))


def test_the_cluster_comes_apart_and_leaves_nothing_on_any_machine(vms: VmCluster) -> None:
    first = vms.vm(1)
    for m in vms.machines[1:3]:
        if (m.home / "machine" / "member.json").exists():
            _leave(m)
    gc = first.run("swarm", "gc", "--down-nodes")   # the machines that left are forgotten by the swarm too
    assert gc.returncode == 0 and gc.stdout.count("forgot swarm node") == 2, gc.stdout + gc.stderr
    assert sorted(_machine_rows(vms.status(1))) == ["vm1"]
    r = first.run("cluster", "leave")
    assert r.returncode == 0, r.stdout + r.stderr
    for m in vms.machines:
        assert m.leftovers() == [], (m.name, m.leftovers())
    gone = first.run("cluster", "status")
    assert gone.returncode == 1 and "no cluster" in gone.stdout + gone.stderr, gone.stdout + gone.stderr
