"""Operator endpoints, authentication, leader redirects, and master restarts (soft state)."""

from __future__ import annotations

import requests

from tests.support.mesos_framework import TestFramework, task_info


def _get(m, path: str, **kw) -> requests.Response:
    return requests.get(f"http://{m.master_address}{path}", timeout=10, **kw)


def test_state_and_metrics_have_mesos_shapes(cluster, framework) -> None:
    m = cluster([{"resources": "cpus:4;mem:4096", "attributes": "rack:r1", "hostname": "h1"}])
    f = framework(m.master_address)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], cpus=1, mem=1024)
    done = task_info(offer["agent_id"], cpus=1, mem=1024, command="exit 0")
    f.launch(offer, [task, done], refuse_seconds=60)
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    f.wait_state(done["task_id"]["value"], "TASK_FINISHED")
    state = _get(m, "/master/state").json()
    (agent,) = state["slaves"]
    assert agent["hostname"] == "h1" and agent["attributes"] == {"rack": "r1"}
    assert agent["resources"]["cpus"] == 4 and agent["used_resources"]["cpus"] == 1
    (fw,) = state["frameworks"]
    assert fw["id"] == f.id and fw["active"] and [t["id"] for t in fw["tasks"]] == [task["task_id"]["value"]]
    assert [t["state"] for t in fw["completed_tasks"]] == ["TASK_FINISHED"]
    assert fw["used_resources"]["mem"] == 1024
    snap = _get(m, "/metrics/snapshot").json()
    assert snap["master/cpus_total"] == 4 and snap["master/cpus_used"] == 1
    assert snap["master/mem_total"] == 4096 and snap["master/mem_used"] == 1024
    assert snap["master/frameworks_active"] == 1 and snap["master/tasks_running"] == 1
    assert snap["master/tasks_finished"] == 1 and snap["allocator/mesos/allocation_run_ms"] >= 0
    assert _get(m, "/version").json()["version"].startswith("1.")
    r = _get(m, "/redirect", allow_redirects=False)
    assert r.status_code == 307 and r.headers["Location"] == f"//{m.master_address}"


def test_non_leading_master_redirects_schedulers_to_the_leader(cluster) -> None:
    m = cluster(0)

    async def demote() -> None:
        m.server.master.leader_address = "192.0.2.10:5050"  # documentation range; never contacted
    m.call(demote())
    r = requests.post(f"http://{m.master_address}/api/v1/scheduler", json={"type": "SUBSCRIBE"},
                      allow_redirects=False, timeout=10)
    assert r.status_code == 307 and r.headers["Location"] == "//192.0.2.10:5050/master/api/v1/scheduler"
    r = _get(m, "/redirect", allow_redirects=False)
    assert r.headers["Location"] == "//192.0.2.10:5050"


def test_basic_authentication_of_frameworks(cluster, framework) -> None:
    m = cluster(1, credentials={"alice": "s3cret"})
    f = framework(m.master_address, principal="alice", secret="s3cret")
    f.take_offer()
    url = f"http://{m.master_address}/api/v1/scheduler"
    body = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "u", "name": "x"}}}
    assert requests.post(url, json=body, timeout=10).status_code == 401
    assert requests.post(url, json=body, auth=("alice", "wrong"), timeout=10).status_code == 401
    body["subscribe"]["framework_info"]["principal"] = "bob"
    r = requests.post(url, json=body, auth=("alice", "s3cret"), timeout=10)
    assert r.status_code == 400 and "does not match" in r.text


def test_master_restart_keeps_tasks_and_frameworks_resubscribe(cluster, framework) -> None:
    m = cluster(2)
    f = framework(m.master_address, failover_timeout=60)
    offer = f.take_offer()
    task = task_info(offer["agent_id"], cpus=1)
    f.launch(offer, [task])
    f.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    old_master = m.server.master.id
    m.restart_master()
    assert m.server.master.id != old_master
    f.sched.wait(lambda: f.sched.registrations >= 2, timeout=15, what="re-subscription after the restart")

    def running() -> bool:
        fws = _get(m, "/master/state").json()["frameworks"]
        return any(fw["id"] == f.id and fw["connected"] and [t["state"] for t in fw["tasks"]] == ["TASK_RUNNING"]
                   for fw in fws)
    f.sched.wait(running, timeout=15, what="the task back in the restarted master's state")
    n = len(f.sched.updates)
    f.driver.reconcileTasks([])
    got = f.sched.wait(lambda: f.sched.updates[n:], what="reconciliation")
    assert (got[0]["task_id"]["value"], got[0]["state"]) == (task["task_id"]["value"], "TASK_RUNNING")
    f.sched.wait(lambda: _get(m, "/metrics/snapshot").json()["master/slaves_active"] == 2, what="both agents back")
    f.driver.killTask(task["task_id"])
    f.wait_state(task["task_id"]["value"], "TASK_KILLED")


def test_restarted_master_accepts_an_old_framework_id_after_the_framework_stopped(cluster) -> None:
    m = cluster(1)
    first = TestFramework(m.master_address, failover_timeout=120).start()
    fid = first.id
    first.stop(teardown=False)
    m.restart_master()
    again = TestFramework(m.master_address, framework_id=fid).start()
    try:
        assert again.id == fid
        fw = next(x for x in _get(m, "/master/state").json()["frameworks"] if x["id"] == fid)
        assert fw["failover_timeout"] == 60
    finally:
        again.stop()


def test_the_master_serves_pages_only_when_its_composer_adds_them(cluster) -> None:
    """The master knows nothing of the web UI: the command line (or a test) adds its routes."""
    from scylla_singa.ui import master_page

    bare = cluster(1)
    assert _get(bare, "/").status_code == 404 and _get(bare, "/metrics").status_code == 404
    assert _get(bare, "/metrics/snapshot").status_code == 200           # Mesos's own endpoints stay
    with_ui = cluster(1, master_routes=[master_page.routes])
    assert _get(with_ui, "/").status_code == 200
    assert _get(with_ui, "/metrics").text.startswith("# HELP scylla_master_")
