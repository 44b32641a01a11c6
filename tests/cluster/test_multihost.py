"""Jobs across the hosts of the session's cluster (ours and Apache Mesos): the example, placement by
policy, a 6-process job, both delivery modes, real SINGA, and status/logs/kill of a running job.

Distributed Hogwild (3 worker groups, 3 server groups: 3 processes of 2
CPUs) on 3 agents of 4 CPUs: `spread` puts one process on each host, so
its groups synchronise across VXLAN links between hosts; `pack` fills
hosts first and needs only 2. Downpour has 6 processes of 1 CPU: two per
host. With `--deliver hdfs` job.conf and cluster.json go to HDFS and each
agent's fetcher downloads them over WebHDFS into the task's sandbox (a stock
Mesos agent needs no Hadoop for that); the task reads them at /mnt/scylla,
and checkpoints go to an hdfs:// workspace. The jobs run on the Python
runtime (singa-py), but one: the example on Apache SINGA itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import hdfs

from scylla_singa.cluster.state import ClusterInfo
from scylla_singa.common.waiting import wait_until
from scylla_singa.framework.mesos_http import MesosHttp
from tests.support.job_confs import REAL_SINGA_IMAGE
from tests.support.scylla_cli import REPO, ScyllaCli, last_json
from .cluster_helpers import HOGWILD, cluster_credential, job_conf, leader, verify_checkpoints

EXAMPLE = REPO / "examples" / "digits-mlp" / "job.conf"
DOWNPOUR = REPO / "examples" / "frameworks" / "downpour.conf"


def _run(cli: ScyllaCli, cluster: ClusterInfo, *args: str, master: bool = True, conf: Path = HOGWILD) -> dict:
    r = cli.run("run", "--json", *(("--master", cluster.master) if master else ()), *args, str(conf))
    assert r.returncode == 0, r.stderr[-3000:]
    if not master:  # `run` found the running cluster by itself (its SCYLLA_HOME is the cluster's)
        assert f"using the local cluster's master {cluster.master}" in r.stderr, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 0, out
    return out


def test_the_example_trains_above_90_percent_and_leaves_nothing(cli: ScyllaCli, cluster: ClusterInfo) -> None:
    out = _run(cli, cluster, conf=EXAMPLE)
    assert out["steps"] == 600 and [(p["id"], p["state"]) for p in out["procs"]] == [(0, "TASK_FINISHED")]
    cli.assert_nothing_left(out["job"])


def test_apache_singa_itself_trains_the_example(cli: ScyllaCli, cluster: ClusterInfo) -> None:
    """Real SINGA (singa-task in the Apache SINGA image) reads its files from /mnt/scylla like the Python
    runtime, though its sandbox (its working directory) is closed to it."""
    out = _run(cli, cluster, "--image", REAL_SINGA_IMAGE, conf=EXAMPLE)
    assert out["steps"] == 600 and out["procs"][0]["state"] == "TASK_FINISHED"
    logs = cli.run("logs", "--stderr", out["job"])
    assert "Train @ step" in logs.stdout and "singa-task:" in logs.stdout, logs.stdout[-2000:] + logs.stderr
    cli.assert_nothing_left(out["job"])


def test_downpour_runs_six_processes_two_on_each_host(cli: ScyllaCli, cluster: ClusterInfo) -> None:
    out = _run(cli, cluster, "--policy", "spread", conf=DOWNPOUR)
    hosts = [p["agent"] for p in out["procs"]]
    assert sorted(p["id"] for p in out["procs"]) == list(range(6)), out
    assert sorted(hosts.count(n.name) for n in cluster.nodes) == [2, 2, 2], out  # spread: least loaded first
    assert all(p["state"] == "TASK_FINISHED" for p in out["procs"])
    cli.assert_nothing_left(out["job"])


def test_status_logs_and_kill_of_a_running_job(cli: ScyllaCli, cluster: ClusterInfo, tmp_path) -> None:
    p = cli.start("run", "--json", "--master", cluster.master, str(job_conf(tmp_path, 200000)))
    job = cli.new_job()
    wait_until(lambda: cli.store().progress(job), 120, "training progress")
    r = cli.run("status", "--json", job)
    assert r.returncode == 0, r.stderr[-2000:]
    status = json.loads(r.stdout)
    assert status["state"] == "RUNNING" and [pr["state"] for pr in status["procs"]] == ["TASK_RUNNING"] * 3, status
    assert {pr["agent"] for pr in status["procs"]} == {n.name for n in cluster.nodes}
    out = cli.run("logs", job)  # process 0's stdout, read through its agent's sandbox files
    assert out.returncode == 0 and "PROGRESS {" in out.stdout, out.stderr
    err = cli.run("logs", "--proc", "2", "--stderr", job)
    assert err.returncode == 0 and "process 2 of 3" in err.stdout, err.stdout[-2000:] + err.stderr
    killed = cli.run("kill", job)
    assert killed.returncode == 0, killed.stderr
    p.wait(120)
    result = last_json(cli.output(p)[0])
    assert p.returncode == 1 and result["state"] == "KILLED", result
    assert {pr["state"] for pr in result["procs"]} == {"TASK_KILLED"}, result
    cli.assert_nothing_left(job)


def test_spread_puts_hogwild_on_all_three_hosts_and_it_trains_across_them(cli: ScyllaCli,
                                                                           cluster: ClusterInfo) -> None:
    out = _run(cli, cluster, "--policy", "spread")
    hosts = [p["agent"] for p in out["procs"]]
    assert sorted(hosts) == sorted(n.name for n in cluster.nodes), out  # one process per host
    assert all(p["state"] == "TASK_FINISHED" for p in out["procs"])
    cli.assert_nothing_left(out["job"])
    where = cli.home / "jobs" / out["job"] / "workspace" / "checkpoint"
    assert verify_checkpoints([p.name for p in where.iterdir()], lambda n: (where / n).read_bytes()) == \
        [200, 400, 600]


def test_pack_with_room_on_a_host_uses_fewer_hosts(cli: ScyllaCli, cluster: ClusterInfo) -> None:
    out = _run(cli, cluster, "--policy", "pack", master=False)
    hosts = {p["agent"] for p in out["procs"]}
    assert len(out["procs"]) == 3 and len(hosts) == 2, out  # 2 CPUs each: two fit on one 4-CPU host
    cli.assert_nothing_left(out["job"])


def test_hdfs_delivery_fetches_the_job_files_into_each_sandbox_and_checkpoints_into_hdfs(
        cli: ScyllaCli, cluster: ClusterInfo, cluster_state) -> None:
    out = _run(cli, cluster, "--deliver", "hdfs", "--hdfs", cluster.webhdfs)
    job = out["job"]
    record = cli.store().load(job)
    assert record.artifacts.workspace == f"{cluster.hdfs}/scylla/{job}/workspace"
    # WebHDFS http:// URIs, which a stock Mesos fetcher downloads itself; the fetched copies (relative
    # host paths: in the sandbox) are the task's read-only /mnt/scylla files, nothing from the host.
    assert {u["value"] for u in record.artifacts.uris} == {
        f"{cluster.webhdfs}/webhdfs/v1/scylla/{job}/{name}?op=OPEN&user.name=scylla"
        for name in ("job.conf", "cluster.json")}
    assert {(v["host_path"], v["container_path"]) for v in record.artifacts.volumes} == {
        ("job.conf", "/mnt/scylla/job.conf"), ("cluster.json", "/mnt/scylla/cluster.json")}
    # Each agent's fetcher put both files into the task's sandbox.
    mesos = MesosHttp(leader(cluster_state), cluster_credential(cluster_state.config))
    for task in record.tasks.values():
        agent = mesos.agent_url(task.agent_id)
        sandbox = mesos.sandbox(agent, task.task_id)
        conf, _ = mesos.read(agent, f"{sandbox}/job.conf", 0, 1 << 20)
        table, _ = mesos.read(agent, f"{sandbox}/cluster.json", 0, 1 << 20)
        assert conf == HOGWILD.read_text()
        assert [p["host"] for p in json.loads(table)["procs"]] == [f"{job}-proc-{i}" for i in range(3)]
    # The job's files are gone from HDFS; its workspace with the checkpoints stays.
    client = hdfs.InsecureClient(cluster.webhdfs, user="test", timeout=30)
    assert client.list(f"/scylla/{job}") == ["workspace"]
    where = f"/scylla/{job}/workspace/checkpoint"

    def read(name: str) -> bytes:
        with client.read(f"{where}/{name}") as r:
            return r.read()
    assert verify_checkpoints(client.list(where), read)  # at least one complete step, every file sound
    cli.assert_nothing_left(job)
