"""The job view and the master page while a real SINGA job trains in containers on two agents.

One job for the whole module: an embedded master with two Docker agents,
and `scylla-singa run --master` as a subprocess training Downpour (6
processes: 4 workers, 2 servers, spread over both agents) for far more
steps than the tests need. At the end the framework gets Ctrl-C (it kills
the job and removes its network), then anything left is removed by label.

The job view needs the framework's control token: the browser opens the
sign-in address `scylla-singa ui` prints (`?token=` once, then a cookie),
and HTTP clients send it as a Bearer header, as a user would.
"""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from scylla_singa.ui import master_page
from scylla_singa.ui.prometheus import CONTENT_TYPE
from tests.support.browser import goto
from tests.support.prometheus_text import parse_exposition
from tests.support.scylla_cli import REPO, ScyllaCli
from .screenshots import screenshot

AGENT = AgentSpec(resources="cpus:4;mem:4096")   # hostnames agent-0 and agent-1
HOSTS = {"agent-0", "agent-1"}
HOSTS_RE = re.compile(r"^agent-[01]$")


@dataclass
class RunningJob:
    mesos: EmbeddedMesos
    scylla: ScyllaCli
    job_id: str
    view: str          # the framework's job view, http://127.0.0.1:PORT
    proc: subprocess.Popen
    sign_in: str       # the job view's address as `scylla-singa ui` prints it: with ?token=<control token>
    control: str       # the control token, for HTTP clients

    def open(self, fragment: str = "") -> str:
        """Where a browser opens the job view (at `fragment`): the sign-in address."""
        return self.sign_in + (f"#{fragment}" if fragment else "")

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.control}"}

    @property
    def master(self) -> str:
        return f"http://{self.mesos.master_address}"


def _long_conf(tmp: Path) -> Path:
    conf = tmp / "downpour-long.conf"
    conf.write_text((REPO / "examples/frameworks/downpour.conf").read_text()
                    .replace("train_steps: 600", "train_steps: 200000").replace("disp_freq: 50", "disp_freq: 20"))
    return conf


def _stop(p: subprocess.Popen) -> None:
    """Ctrl-C: the framework kills the job and removes its network; kill it if that takes too long."""
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(30)


@pytest.fixture(scope="module")
def running_job(tmp_path_factory, docker_client, swarm_manager) -> Iterator[RunningJob]:
    tmp = tmp_path_factory.mktemp("ui-job")
    s = ScyllaCli(tmp / "home", docker_client, tmp)
    (tmp / "home").mkdir()
    mesos = EmbeddedMesos([AGENT, AGENT], docker_client=docker_client, allowed_host_paths=[s.home / "jobs"],
                          master_routes=[master_page.routes])
    mesos.start()
    s.authenticate_with(mesos.framework_credential)   # a secure master, as every one is by default
    p = None
    try:
        p = s.start("run", "--master", mesos.master_address, str(_long_conf(tmp)))
        job_id = wait_until(s.job_ids, 60, "the job to be submitted")[0]
        fid = next(f for j, _, f, _ in s.store().jobs() if j == job_id)
        view = wait_until(lambda: s.store().get_meta(f"api:{fid}"), 30, "the job view's address")
        printed = s.run("ui", timeout=60)
        sign_in = re.search(r"job view\s+(\S+\?token=\S+)", printed.stdout)
        assert sign_in and sign_in.group(1).startswith(f"{view}/"), printed.stdout + printed.stderr
        control = (s.home / "control.token").read_text().strip()
        yield RunningJob(mesos, s, job_id, view, p, sign_in.group(1), control)
    finally:
        if p is not None:
            _stop(p)
        s.cleanup()
        mesos.stop()


def _wait_running(job: RunningJob) -> dict:
    def running() -> dict | None:
        d = requests.get(f"{job.view}/ui/api/jobs/{job.job_id}", headers=job.auth, timeout=10).json()
        return d if d["state"] == "RUNNING" and d["curves"]["train"] else None
    return wait_until(running, 120, "the job to run and report progress", interval_s=0.5)


def _points(tab) -> int:
    return int(tab.locator("#loss-chart path[data-series='train']").get_attribute("data-points"))


def test_the_job_page_shows_each_process_on_its_agent(running_job, page) -> None:
    _wait_running(running_job)
    goto(page, running_job.open())
    expect(page.locator(f".joblist a[data-job='{running_job.job_id}']")).to_contain_text("running")
    rows = page.locator("#procs tbody tr")
    expect(rows).to_have_count(6)
    for i in range(6):
        expect(rows.nth(i).locator("td.agent")).to_have_text(HOSTS_RE)
        expect(rows.nth(i)).to_contain_text("running")
    hosts = page.locator("#placement g.host")
    expect(hosts).to_have_count(2)
    assert {hosts.nth(i).get_attribute("data-host") for i in range(2)} == HOSTS
    for i in range(2):   # spread: three processes per agent, drawn inside its box
        expect(hosts.nth(i)).to_contain_text("3 procs")
    expect(page.locator("#placement g.proc")).to_have_count(6)
    expect(page.locator("#placement path.edge")).to_have_count(8)       # 4 workers x 2 servers
    expect(page.locator("#placement path.edge.cross")).not_to_have_count(0)


def test_the_loss_curve_gains_points_while_training(running_job, page, tmp_path) -> None:
    _wait_running(running_job)
    goto(page, running_job.open(running_job.job_id))
    page.wait_for_function("() => +document.querySelector(\"#loss-chart path[data-series='train']\")"
                           "?.getAttribute('data-points') > 0")
    before = _points(page)
    page.wait_for_function(f"() => +document.querySelector(\"#loss-chart path[data-series='train']\")"
                           f".getAttribute('data-points') > {before + 2}")
    assert _points(page) > before + 2
    expect(page.locator("#accuracy-chart path[data-series='test']")).not_to_have_attribute("data-points", "0")
    expect(page.locator("#fact-rate .v")).not_to_have_text("–")
    screenshot(page, "job-view.png", tmp_path)


def test_a_task_log_opens_from_the_master_page(running_job, page, tmp_path) -> None:
    _wait_running(running_job)
    page.set_extra_http_headers(running_job.mesos.framework_credential.headers())   # after the Basic prompt
    goto(page, f"{running_job.master}/")
    expect(page.locator("#agents tbody tr[data-agent]")).to_have_count(2)
    fw = page.locator("#frameworks tbody tr[data-framework]")
    expect(fw).to_have_count(1)
    expect(fw.locator(".dominant")).not_to_have_text("0.0%")
    task = page.locator(f"tr[data-task='{running_job.job_id}.proc-0.a1']")
    expect(task).to_contain_text("running")
    screenshot(page, "master-ui.png", tmp_path)
    task.locator("a.log-stdout").click()
    expect(page.locator("#log")).to_contain_text("PROGRESS {")
    expect(page.locator("#log")).to_contain_text(running_job.job_id)


def test_a_task_log_opens_from_the_job_view(running_job, page) -> None:
    _wait_running(running_job)
    goto(page, running_job.open(running_job.job_id))
    page.locator("#procs tbody tr[data-proc='1'] a.log-stdout").click()
    expect(page.locator("#log")).to_contain_text('"proc": 1')


def test_prometheus_can_scrape_both(running_job) -> None:
    _wait_running(running_job)
    resp = requests.get(f"{running_job.view}/metrics", headers=running_job.auth, timeout=10)
    assert resp.status_code == 200 and resp.headers["Content-Type"] == CONTENT_TYPE
    fw = parse_exposition(resp.text)
    assert fw["scylla_framework_jobs"].value(state="RUNNING") == 1
    assert fw["scylla_framework_job_step"].value(job=running_job.job_id) > 0
    assert fw["scylla_framework_job_loss"].value(job=running_job.job_id) > 0
    assert fw["scylla_framework_job_restarts_total"].value(job=running_job.job_id) == 0
    wait_until(lambda: parse_exposition(requests.get(f"{running_job.view}/metrics", headers=running_job.auth,
                                                     timeout=10).text)
               ["scylla_framework_job_steps_per_second"].value(job=running_job.job_id) > 0, 30, "a training rate")
    master = parse_exposition(requests.get(f"{running_job.master}/metrics", auth=running_job.mesos.http_auth,
                                           timeout=10).text)
    assert master["scylla_master_tasks"].value(state="TASK_RUNNING") == 6
    assert master["scylla_master_resources_used"].value(resource="cpus") == 6
    (share,) = [v for _, v in master["scylla_master_framework_dominant_share"].values()]
    assert share >= 6 / 8


def test_the_job_view_is_closed_without_the_control_token_and_the_sign_in_drops_it(running_job, page) -> None:
    """Attack: read a running job's view, its curves and metrics from the network with no token. A browser
    opening the sign-in address ends on the plain address (the token leaves the address bar)."""
    for path in ("/", "/ui/api/jobs", f"/ui/api/jobs/{running_job.job_id}", "/metrics", "/api/jobs"):
        resp = requests.get(f"{running_job.view}{path}", timeout=10)
        assert resp.status_code == 401 and "needs the framework's control token" in resp.text, (path, resp.text)
    goto(page, running_job.open(running_job.job_id))
    expect(page.locator(f".joblist a[data-job='{running_job.job_id}']")).to_be_visible()
    assert "token" not in page.url and page.url.endswith(f"/#{running_job.job_id}"), page.url
