"""Jobs submitted straight after `cluster up` finish without a restart.

A user once saw the first job on a fresh two-master cluster restarted once
(`TASK_LOST - REASON_RECONCILIATION, Reconciliation: Task is unknown`) with
no fault injected: a launch that never reached the master, reconciled as
unknown, cost the gang a restart (framework/core.py now places such a gang
again without one). This test is the first to run on each kind's fresh
shared cluster (marker `fresh_cluster`): twenty one-process jobs in one
`run`, right after the cluster fixture saw every agent registered with the
leader, each must finish with 0 restarts on attempt 1.
"""

from __future__ import annotations

import json

import pytest

from scylla_singa.cluster.state import ClusterInfo
from tests.support.scylla_cli import REPO, ScyllaCli

EXAMPLE = REPO / "examples" / "digits-mlp" / "job.conf"
JOBS = 20


@pytest.mark.fresh_cluster
def test_twenty_jobs_submitted_straight_after_cluster_up_finish_with_no_restart(
        cli: ScyllaCli, cluster: ClusterInfo, tmp_path) -> None:
    base = EXAMPLE.read_text()
    assert 'name: "digits-mlp"' in base and "train_steps: 600" in base
    confs = []
    for i in range(JOBS):
        conf = tmp_path / f"first-{i:02d}.conf"
        conf.write_text(base.replace('name: "digits-mlp"', f'name: "first-{i:02d}"')
                        .replace("train_steps: 600", "train_steps: 100"))
        confs.append(str(conf))
    r = cli.run("run", "--json", "--master", cluster.master, *confs, timeout=900)
    outs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(outs) == JOBS, r.stdout[-3000:]
    restarted = {o["job"]: o["restarts"] for o in outs if o["restarts"]}
    assert not restarted, f"restarted with no fault injected: {restarted}\n{r.stderr[-3000:]}"
    assert all(o["state"] == "FINISHED" and o["steps"] == 100 for o in outs), outs
    assert all(cli.store().load(o["job"]).attempt == 1 for o in outs)
    for o in outs:
        cli.assert_nothing_left(o["job"])
