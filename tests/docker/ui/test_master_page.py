"""The master's web UI and /metrics against an embedded master with two agents (process runners, no Docker)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import expect

from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from scylla_singa.ui import master_page
from scylla_singa.ui.prometheus import CONTENT_TYPE
from tests.support.browser import goto
from tests.support.mesos_framework import TestFramework, task_info
from tests.support.prometheus_text import parse_exposition

AGENTS = [AgentSpec(hostname="node-a", attributes="rack:r1", resources="cpus:4;mem:8192;disk:10240"),
          AgentSpec(hostname="node-b", attributes="rack:r2", resources="cpus:4;mem:8192;disk:10240")]


@pytest.fixture
def mesos() -> Iterator[EmbeddedMesos]:
    # searchable by every user: the agent runs the task as FrameworkInfo.user ("nobody"), who must reach it
    work = tempfile.mkdtemp(prefix="scylla-ui-")
    os.chmod(work, 0o711)
    try:
        with EmbeddedMesos(AGENTS, use_docker=False, work_dir=work, allocation_interval=0.2,
                           master_routes=[master_page.routes]) as m:
            yield m
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def framework(mesos) -> Iterator[TestFramework]:
    """A framework running one task on node-a that prints a PROGRESS line and sleeps."""
    fw = TestFramework(mesos.master_address, "ui-test", credential=mesos.framework_credential).start()
    try:
        offer = fw.take_offer(lambda o: o["hostname"] == "node-a", cpus=1)
        fw.launch(offer, [task_info(offer["agent_id"], task_id="printer", cpus=1, mem=1024,
                                    command='echo "PROGRESS {\\"step\\": 7}"; echo to-stderr >&2; sleep 60')])
        fw.wait_state("printer", "TASK_RUNNING")
        yield fw
    finally:
        fw.stop()


@pytest.fixture
def signed_in(mesos, page):
    """The browser tab, sending the cluster's framework credential (as a browser does after the Basic prompt)."""
    page.set_extra_http_headers(mesos.framework_credential.headers())
    return page


def test_the_master_page_lists_both_agents_and_sees_one_go(mesos, signed_in) -> None:
    page = signed_in
    goto(page, f"http://{mesos.master_address}/")
    rows = page.locator("#agents tbody tr[data-agent]")
    expect(rows).to_have_count(2)
    expect(page.locator("tr[data-agent='node-a']")).to_contain_text("rack: r1")
    expect(page.locator("tr[data-agent='node-b']")).to_contain_text("reachable")
    expect(page.locator("#tile-cpus")).to_contain_text("/ 8")
    mesos.stop_agent(1)     # the page notices without a reload
    expect(page.locator("tr[data-agent='node-b']")).to_contain_text("unreachable")
    expect(page.locator("#tile-agents")).to_contain_text("1 / 2")


def test_a_framework_shows_its_share_and_a_task_log_opens(mesos, framework, signed_in) -> None:
    page = signed_in
    goto(page, f"http://{mesos.master_address}/")
    fw_row = page.locator(f"tr[data-framework='{framework.id}']")
    expect(fw_row).to_contain_text("ui-test")
    expect(fw_row.locator(".dominant")).not_to_have_text("0.0%")
    task = page.locator("tr[data-task='printer']")
    expect(task).to_contain_text("running")
    expect(task).to_contain_text("node-a")
    task.locator("a.log-stdout").click()
    expect(page.locator("#log")).to_contain_text('PROGRESS {"step": 7}')
    page.get_by_text("show stderr").click()
    expect(page.locator("#log")).to_contain_text("to-stderr")


def test_metrics_are_served_as_prometheus_text_next_to_the_snapshot(mesos, framework) -> None:
    base = f"http://{mesos.master_address}"
    assert requests.get(f"{base}/metrics", timeout=10).status_code == 401   # reveals the cluster: credentials
    resp = requests.get(f"{base}/metrics", timeout=10, auth=mesos.http_auth)
    assert resp.status_code == 200 and resp.headers["Content-Type"] == CONTENT_TYPE
    fams = parse_exposition(resp.text)
    assert fams["scylla_master_agents"].value(state="reachable") == 2
    assert fams["scylla_master_resources_total"].value(resource="cpus") == 8
    assert fams["scylla_master_resources_used"].value(resource="cpus") == 1
    assert fams["scylla_master_tasks"].value(state="TASK_RUNNING") == 1
    assert fams["scylla_master_framework_dominant_share"].value(framework_id=framework.id, name="ui-test",
                                                                role="*") > 0
    assert fams["scylla_master_allocation_runs_total"].value() > 0
    snapshot = requests.get(f"{base}/metrics/snapshot", timeout=10, auth=mesos.http_auth).json()
    assert snapshot["master/cpus_used"] == 1 and snapshot["master/tasks_running"] == 1


def test_log_requests_for_unknown_things_say_what_is_wrong(mesos) -> None:
    base = f"http://{mesos.master_address}/ui/api/log"
    http = requests.Session()
    http.auth = mesos.http_auth
    assert http.get(base, params={"agent": "nope", "task": "t"}, timeout=10).json() == \
        {"error": "no agent nope is registered"}
    state = http.get(f"http://{mesos.master_address}/ui/state", timeout=10).json()
    agent = state["agents"][0]["id"]
    resp = http.get(base, params={"agent": agent, "task": "never-ran"}, timeout=10)
    assert resp.status_code == 404 and "no sandbox" in resp.json()["error"]
    assert http.get(base, params={"agent": agent, "task": "t", "file": "job.conf"}, timeout=10).status_code == 400
