"""The master page's model and Prometheus families, from /master/state-shaped dicts."""

from __future__ import annotations

import pytest

from scylla_singa.ui.master_view import (MAX_TASKS, agent_address, cluster_metrics, cluster_view, dominant,
                                         resource_names, shares, task_rows)
from scylla_singa.ui.prometheus import render
from .builders import framework, slave, state, task
from tests.support.recorded_mesos import recorded
from tests.support.prometheus_text import parse_exposition

TOTAL = {"cpus": 4.0, "mem": 8192.0, "disk": 10000.0}


def two_agents_one_framework() -> dict:
    a = slave("S1", "node-a", TOTAL, used={"cpus": 2.0, "mem": 1024.0}, offered={"cpus": 1.0, "mem": 512.0},
              attributes={"rack": "r1"})
    b = slave("S2", "node-b", TOTAL, active=False)
    fw = framework("F1", "scylla-singa", used={"cpus": 2.0, "mem": 1024.0}, offered={"cpus": 1.0, "mem": 512.0},
                   tasks=[task("t1", "S1")], completed=[task("t0", "S1", "TASK_FAILED", ts=500.0, reason="R")],
                   offers=1)
    return state([a, b], [fw])


@pytest.mark.parametrize("alloc, total, want", [
    ({}, {"cpus": 8.0}, (None, 0.0)),
    ({"cpus": 2.0, "mem": 1024.0}, {"cpus": 8.0, "mem": 2048.0}, ("mem", 0.5)),
    ({"cpus": 4.0, "mem": 512.0}, {"cpus": 8.0, "mem": 2048.0}, ("cpus", 0.5)),
    ({"cpus": 1.0, "gpus": 1.0}, {"cpus": 8.0, "gpus": 0.0}, ("cpus", 0.125)),   # no gpus in the cluster
], ids=["nothing", "mem-dominant", "cpus-dominant", "absent-resource"])
def test_dominant_share_is_the_largest_fraction_of_the_cluster(alloc, total, want) -> None:
    assert dominant(shares(alloc, total)) == want


def test_resource_names_put_mesos_four_first_and_gpus_only_when_present() -> None:
    assert resource_names([{"cpus": 1.0, "mem": 1.0, "net_bw": 1000.0, "gpus": 0.0}]) == \
        ["cpus", "mem", "disk", "net_bw"]
    assert resource_names([{"cpus": 1.0, "gpus": 2.0}]) == ["cpus", "mem", "disk", "gpus"]


@pytest.mark.parametrize("pid, want", [
    ("slave(1)@10.0.0.5:5051", "10.0.0.5:5051"), ("slave(1)@10.0.0.5:0", None), ("", None),
], ids=["serves", "port-zero", "no-pid"])
def test_agent_address_comes_from_its_pid(pid, want) -> None:
    assert agent_address({"pid": pid}) == want


def test_the_page_shows_agents_with_usage_and_reachability() -> None:
    v = cluster_view(two_agents_one_framework(), {"master/elected": 1.0}, now=1000.0)
    assert [(a["hostname"], a["active"]) for a in v["agents"]] == [("node-a", True), ("node-b", False)]
    a = v["agents"][0]
    assert a["attributes"] == {"rack": "r1"} and a["tasks"] == 1 and a["address"] == "10.0.0.1:5051"
    cpus = next(u for u in a["resources"] if u["name"] == "cpus")
    assert (cpus["total"], cpus["used"], cpus["offered"]) == (4.0, 2.0, 1.0)
    assert v["agents_total"] == 2 and v["agents_active"] == 1
    # the cluster total counts reachable agents only, as the allocator does
    assert next(u for u in v["resources"] if u["name"] == "cpus") == \
        {"name": "cpus", "total": 4.0, "used": 2.0, "offered": 1.0}
    assert v["master"]["uptime_s"] == 100.0


def test_frameworks_show_their_dominant_share_offers_and_tasks_by_state() -> None:
    fw = cluster_view(two_agents_one_framework(), {}, now=1000.0)["frameworks"][0]
    assert fw["dominant_resource"] == "cpus" and fw["dominant_share"] == 0.75   # (2 used + 1 offered) / 4
    assert fw["shares"]["mem"] == pytest.approx(1536 / 8192)
    assert fw["offers"] == 1 and fw["tasks_by_state"] == {"TASK_FAILED": 1, "TASK_RUNNING": 1}


@pytest.mark.parametrize("url, shown", [
    ("http://fw:8080/", "http://fw:8080/"), ("HTTPS://fw/", "HTTPS://fw/"), ("javascript:alert(1)", ""),
    ("//evil/", ""), (None, ""),
], ids=["http", "https", "javascript", "scheme-relative", "none"])
def test_only_http_web_ui_links_of_frameworks_are_shown(url, shown) -> None:
    fw = framework("F", "f", {})
    fw["webui_url"] = url
    assert cluster_view(state([slave("S1", "a", TOTAL)], [fw]), {}, 0.0)["frameworks"][0]["webui_url"] == shown


def test_frameworks_are_ordered_connected_first_then_by_share() -> None:
    s = state([slave("S1", "a", TOTAL)], [
        framework("small", "small", used={"cpus": 1.0}), framework("gone", "gone", used={"cpus": 3.0}, connected=False),
        framework("big", "big", used={"cpus": 2.0})])
    assert [f["id"] for f in cluster_view(s, {}, 0.0)["frameworks"]] == ["big", "small", "gone"]


def test_tasks_link_their_logs_only_when_the_agent_serves_files() -> None:
    s = state([slave("S1", "a", TOTAL), slave("S2", "b", TOTAL, port=0)],
              [framework("F", "f", {}, tasks=[task("on-a", "S1"), task("on-b", "S2")])])
    rows = {r["id"]: r for r in task_rows(s)}
    assert rows["on-a"]["logs"] == {"stdout": "/ui/log?agent=S1&task=on-a&file=stdout",
                                    "stderr": "/ui/log?agent=S1&task=on-a&file=stderr"}
    assert rows["on-b"]["logs"] is None and rows["on-b"]["hostname"] == "b"


def test_tasks_list_active_ones_first_newest_first_and_is_capped() -> None:
    done = [task(f"old-{i}", "S1", "TASK_FINISHED", ts=float(i)) for i in range(MAX_TASKS + 10)]
    s = state([slave("S1", "a", TOTAL)], [framework("F", "f", {}, tasks=[task("live", "S1", ts=0.0)],
                                                    completed=done)])
    rows = task_rows(s)
    assert len(rows) == MAX_TASKS
    assert rows[0]["id"] == "live" and rows[1]["id"] == f"old-{MAX_TASKS + 9}"


def test_active_tasks_keep_a_job_together_in_process_order() -> None:
    tasks = [task(f"job.proc-{i}.a1", "S1", ts=float(-i)) for i in (10, 2, 1)]
    s = state([slave("S1", "a", TOTAL)], [framework("F", "f", {}, tasks=tasks)])
    assert [r["id"] for r in task_rows(s)] == ["job.proc-1.a1", "job.proc-2.a1", "job.proc-10.a1"]


def test_task_reason_and_message_come_from_get_tasks_not_from_master_state() -> None:
    s = state([slave("S1", "a", TOTAL)], [framework("F", "f", {}, completed=[
        task("t", "S1", "TASK_FAILED", reason="stale", message="stale")])])
    get_tasks = {"type": "GET_TASKS", "get_tasks": {"completed_tasks": [
        {"task_id": {"value": "t"}, "framework_id": {"value": "F"}, "state": "TASK_FAILED",
         "statuses": [{"state": "TASK_STARTING"}, {"state": "TASK_FAILED", "reason": "REASON_COMMAND_EXECUTOR_FAILED",
                                                   "message": "exited with status 3"}]}]}}
    row = task_rows(s, get_tasks=get_tasks)[0]
    assert (row["state"], row["reason"], row["message"], row["active"]) == \
        ("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED", "exited with status 3", False)
    assert (task_rows(s)[0]["reason"], task_rows(s)[0]["message"]) == ("", "")  # none without GET_TASKS


def test_the_page_shows_reasons_and_messages_of_a_real_mesos_from_its_get_tasks() -> None:
    """Apache Mesos 1.12's recorded answers: /master/state carries no reason or message at all."""
    real_state = recorded("master/state.after.json")["response"]["body"]
    real_tasks = recorded("operator/GET_TASKS.after.json")["response"]["body"]
    statuses = [st for f in real_state["frameworks"] + real_state["completed_frameworks"]
                for t in f["tasks"] + f["completed_tasks"] for st in t["statuses"]]
    assert statuses and not any("reason" in st or "message" in st for st in statuses)
    rows = {r["id"].split("-", 2)[2]: r for r in cluster_view(real_state, {}, 0.0, real_tasks)["tasks"]}
    assert rows["hdfs-uri"]["reason"] == "REASON_CONTAINER_LAUNCH_FAILED"
    assert rows["hdfs-uri"]["message"].startswith("Failed to launch container: Failed to fetch all URIs")
    assert (rows["volume-relative"]["state"], rows["volume-relative"]["message"]) == \
        ("TASK_FAILED", "Container exited with status 1")


def test_prometheus_families_parse_and_carry_the_cluster() -> None:
    metrics = {"master/outstanding_offers": 1.0, "master/tasks_running": 1.0, "master/tasks_failed": 4.0,
               "allocator/mesos/allocation_runs": 12.0, "allocator/mesos/allocation_run_ms": 2.5,
               "master/elected": 1.0, "master/uptime_secs": 60.0}
    fams = parse_exposition(render(cluster_metrics(two_agents_one_framework(), metrics)))
    assert fams["scylla_master_resources_total"].value(resource="cpus") == 4.0
    assert fams["scylla_master_resources_used"].value(resource="mem") == 1024.0
    assert fams["scylla_master_resources_offered"].value(resource="cpus") == 1.0
    assert fams["scylla_master_agents"].value(state="unreachable") == 1.0
    assert fams["scylla_master_tasks"].value(state="TASK_RUNNING") == 1.0
    assert fams["scylla_master_tasks_terminal_total"].kind == "counter"
    assert fams["scylla_master_tasks_terminal_total"].value(state="TASK_FAILED") == 4.0
    assert fams["scylla_master_allocation_round_seconds"].value() == 0.0025
    assert fams["scylla_master_allocation_runs_total"].value() == 12.0
    assert fams["scylla_master_framework_dominant_share"].value(framework_id="F1", name="scylla-singa",
                                                                role="*") == 0.75
    assert fams["scylla_master_framework_offers"].value(framework_id="F1", name="scylla-singa") == 1.0
