"""Jobs across the hosts of the session's cluster: placement by policy, the overlay, HDFS delivery.

Distributed Hogwild (3 worker groups, 3 server groups: 3 processes of 2
CPUs) on 3 agents of 4 CPUs: `spread` puts one process on each host, so
its groups synchronise across VXLAN links between hosts; `pack` fills
hosts first and needs only 2. With `--deliver hdfs` job.conf and
cluster.json go to HDFS and each agent's fetcher pulls them into the
task's sandbox; checkpoints go to an hdfs:// workspace.
"""

from __future__ import annotations

import json
from pathlib import Path

import hdfs

from scylla_singa.cluster.state import ClusterInfo
from scylla_singa.framework.mesos_http import MesosHttp
from tests.support.scylla_cli import ScyllaCli, last_json
from .cluster_helpers import HOGWILD, leader, verify_checkpoints


def _run(cli: ScyllaCli, cluster: ClusterInfo, *args: str, master: bool = True) -> dict:
    r = cli.run("run", "--json", *(("--master", cluster.master) if master else ()), *args, str(HOGWILD))
    assert r.returncode == 0, r.stderr[-3000:]
    if not master:  # `run` found the running cluster by itself (its SCYLLA_HOME is the cluster's)
        assert f"using the local cluster's master {cluster.master}" in r.stderr, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 0, out
    return out


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
    assert not record.artifacts.volumes and {u["value"] for u in record.artifacts.uris} == {
        f"{cluster.hdfs}/scylla/{job}/job.conf", f"{cluster.hdfs}/scylla/{job}/cluster.json"}
    # Each agent's fetcher put both files into the task's sandbox (no volume was mounted).
    mesos = MesosHttp(leader(cluster_state))
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
