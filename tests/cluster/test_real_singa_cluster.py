"""Apache SINGA across the hosts of the session's cluster: four processes meeting in the cluster's ZooKeeper.

Downpour with each group's two workers in one process (2 worker + 2 server processes) on agents of
4 CPUs: `spread` puts the processes on distinct hosts first, so SINGA's ZeroMQ traffic crosses the
overlay's VXLAN links. The job's znodes live under its own chroot of the cluster's ZooKeeper (where
the masters also elect their leader) and are gone when it ends.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest
from kazoo.client import KazooClient

from scylla_singa.cluster.state import ClusterInfo
from scylla_singa.contracts import (ENV_ATTEMPT, ENV_ZK_HOSTS, RUNTIME_APACHE_SINGA, RUNTIME_LABEL,
                                    job_zookeeper_root)
from tests.support.job_confs import REAL_SINGA_IMAGE, downpour4
from tests.support.scylla_cli import ScyllaCli, last_json


def test_four_real_singa_processes_train_across_hosts_meeting_in_the_clusters_zookeeper(
        cli: ScyllaCli, cluster: ClusterInfo, host_engine: docker.DockerClient, tmp_path: Path) -> None:
    labels = host_engine.images.get(REAL_SINGA_IMAGE).labels or {}
    if labels.get(RUNTIME_LABEL) != RUNTIME_APACHE_SINGA:   # the framework learns the runtime from this label
        pytest.fail(f"{REAL_SINGA_IMAGE} does not say {RUNTIME_LABEL}={RUNTIME_APACHE_SINGA}: rebuild it from "
                    "images/singa (`scylla-singa images build singa`) or set SCYLLA_SINGA_IMAGE", pytrace=False)
    conf = tmp_path / "downpour4.conf"
    conf.write_text(downpour4())
    r = cli.run("run", "--json", "--image", REAL_SINGA_IMAGE, "--master", cluster.master, "--policy", "spread",
                str(conf))
    assert r.returncode == 0, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90 and out["restarts"] == 0, str(out)
    assert sorted(p["id"] for p in out["procs"]) == [0, 1, 2, 3]
    hosts = {p["agent"] for p in out["procs"]}
    assert len(hosts) >= 2, out
    job = out["job"]
    record = cli.store().load(job)
    env = dict(record.artifacts.env)
    assert env[ENV_ZK_HOSTS] == f"{cluster.zk_hosts}{job_zookeeper_root(job)}"   # the cluster's, chrooted
    assert record.spec.apache_singa
    zk = KazooClient(hosts=cluster.zk_hosts, timeout=10)
    zk.start(timeout=30)
    try:
        assert zk.exists(job_zookeeper_root(job)) is None        # removed with the job
        assert zk.get_children("/mesos")                          # the masters' election untouched
    finally:
        zk.stop()
        zk.close()
    assert ENV_ATTEMPT not in env   # per task, not per job: the gang's attempt is in each TaskInfo
    cli.assert_nothing_left(job)
