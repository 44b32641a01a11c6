"""Master failover through the real ZooKeeper: the leading master dies, a standby takes over.

On both clusters (our 2 masters; Apache Mesos's 3, whose replicated log
needs a majority) the masters contend under zk://.../mesos with
`json.info_<seq>` znodes (the lowest leads, as pymesos's detector reads
it); standbys answer 307 to schedulers. Killing the leader ends its
ZooKeeper session (10 s), the next znode becomes the lowest, and that master
rebuilds its state from the agents re-registering with their running tasks
and the framework re-subscribing with its id; the job's tasks never stop.
"""

from __future__ import annotations

import json
import re
import time

import pytest
import requests
from kazoo.client import KazooClient

from scylla_singa.cluster import faults
from scylla_singa.cluster.state import ClusterInfo, State
from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.mesos.api.leader_znodes import parse_zk_url
from tests.support.scylla_cli import ScyllaCli
from .cluster_helpers import cluster_credential, job_conf, mesos_get, record_recovery, volume_checkpoints

pytestmark = pytest.mark.disruptive


def _znodes(cluster: ClusterInfo) -> dict[str, dict]:
    """The masters' `json.info_<seq>` znodes (Apache Mesos's masters also keep `log_replicas` there)."""
    hosts, path = parse_zk_url(cluster.zk)
    zk = KazooClient(hosts=hosts)
    zk.start(timeout=10)
    try:
        return {c: json.loads(zk.get(f"{path}/{c}")[0]) for c in sorted(zk.get_children(path))
                if c.startswith("json.info_")}
    finally:
        zk.stop()
        zk.close()


def _endpoint(state: State, resource: str) -> str:
    return next(m.endpoint for m in state.config.master_specs() if f"{m.name}-master" == resource)


def _subscribe_answer(master: str, credential: Credential) -> requests.Response:
    body = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "test", "name": "probe"}}}
    return requests.post(f"http://{master}/api/v1/scheduler", json=body, allow_redirects=False, timeout=10,
                         headers=credential.headers())


def test_the_standby_takes_over_from_a_killed_leader_and_the_job_goes_on(
        cli: ScyllaCli, cluster: ClusterInfo, healthy_cluster: State, tmp_path, request) -> None:
    state = healthy_cluster
    znodes = _znodes(cluster)
    assert len(znodes) == len(cluster.masters)
    first = min(znodes)
    old = faults.leading_master(state)
    # The next in line: the master of the second-lowest znode.
    second = znodes[sorted(znodes)[1]]["address"]
    standby = next(f"{m.name}-master" for m in state.config.master_specs()
                   if m.endpoint == f"{second['ip']}:{second['port']}")
    assert f"{znodes[first]['address']['ip']}:{znodes[first]['address']['port']}" == _endpoint(state, old)
    credential = cluster_credential(state.config)
    redirect = _subscribe_answer(_endpoint(state, standby), credential)
    assert redirect.status_code == 307 and redirect.headers["Location"].startswith(f"//{_endpoint(state, old)}/")

    p = cli.start("run", "--json", "--master", cluster.zk, str(job_conf(tmp_path, 48000, 2000)))
    job = cli.new_job()
    wait_until(lambda: cli.store().progress(job), 120, "training progress")
    fid = next(f for j, _, f, _ in cli.store().jobs() if j == job)

    def running_tasks(endpoint: str) -> set[str]:
        s = mesos_get(state, endpoint, "/master/state")
        fw = next((f for f in s["frameworks"] if f["id"] == fid and f["connected"]), None)
        return {t["id"] for t in (fw or {}).get("tasks", []) if t["state"] == "TASK_RUNNING"}
    wait_until(lambda: len(running_tasks(_endpoint(state, old))) == 3, 60, "three running tasks on the leader")
    before = running_tasks(_endpoint(state, old))
    killed = time.monotonic()
    faults.kill_process(state, old)
    try:
        wait_until(lambda: faults.leading_master(state) == standby, 60, "the standby to lead")
        elected = time.monotonic() - killed
        new = _endpoint(state, standby)

        def back() -> bool:
            agents = [a for a in mesos_get(state, new, "/master/state")["slaves"] if a["active"]]
            return len(agents) == len(cluster.nodes) and running_tasks(new) == before  # the same tasks, not new ones
        wait_until(back, 60, "the agents to re-register and the framework to re-subscribe with its running tasks")
        recovered = time.monotonic() - killed
        # The tasks went on through the failover: each container still runs or has finished cleanly (on a
        # slow machine the job may reach its last step while the agents re-register).
        containers = cli.containers(job)
        states = [(c.status, c.attrs["State"]["ExitCode"]) for c in containers]
        assert len(states) == 3 and all(s == "running" or code == 0 for s, code in states), \
            cli.describe(containers)
    finally:
        faults.restart_process(state, old)
    # The old leader comes back as the standby, sending schedulers to the new one.
    wait_until(lambda: _subscribe_answer(_endpoint(state, old), credential).status_code == 307, 30,
               "the old leader to stand by")
    assert _subscribe_answer(_endpoint(state, old), credential).headers["Location"].startswith(f"//{new}/")

    out = cli.finish(p)
    # The user's terminal: one line for the loss, one for the subscription back, no driver chatter.
    terminal = cli.output(p)[1]
    assert f"master {_endpoint(state, old)} lost; following the new leader ..." in terminal, terminal
    resubscribed = re.search(rf"re-subscribed to {re.escape(new)} in (\d+\.\d) s", terminal)
    assert resubscribed, terminal
    assert "Traceback" not in terminal and "pymesos" not in terminal and "sleep" not in terminal, terminal
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90, out
    assert out["restarts"] == 0 and cli.store().load(job).attempt == 1, out  # the tasks went on
    assert volume_checkpoints(cli, job)[-1] == 48000  # none corrupted, and the last one is the end
    cli.assert_nothing_left(job)
    record_recovery(request, cluster.mesos, "(d) leading master killed", "new leader elected (ZooKeeper session ends)",
                    elected)
    record_recovery(request, cluster.mesos, "(d) leading master killed",
                    "agents re-registered, framework re-subscribed", recovered)
    record_recovery(request, cluster.mesos, "(d) leading master killed",
                    "re-subscribed, as the framework's terminal says (from the loss it saw)",
                    float(resubscribed.group(1)))
