"""The job view's routes on a real aiohttp server, with a stand-in for runner.Session (no Mesos, no Docker)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from scylla_singa.framework.model import JobState
from scylla_singa.framework.progress_book import ProgressBook
from scylla_singa.framework.store import JobStore
from scylla_singa.ui.assets import files
from scylla_singa.ui.job_view import routes
from scylla_singa.ui.prometheus import CONTENT_TYPE
from .builders import history, job
from tests.support.prometheus_text import parse_exposition

SPLIT = {0: "agent-0", 1: "agent-0", 4: "agent-0", 2: "agent-1", 3: "agent-1", 5: "agent-1"}


class FakeShell:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.driver = type("Driver", (), {"framework_id": "fw-1"})()

    def master_address(self) -> str:
        return "127.0.0.1:9"


class FakeSession:
    """What job_view reads of runner.Session: jobs(), book, store, shell, credential."""

    def __init__(self, tmp: Path) -> None:
        self.credential = None   # an insecure cluster
        self.book = ProgressBook()
        self.store = JobStore(tmp / "framework.sqlite")
        self.shell: FakeShell | None = FakeShell()
        self.job_list = [job(hosts=SPLIT),
                         job(job_id="w-1", state=JobState.WAITING, waiting_reason="0/1 agents can host process 0")]

    def jobs(self):
        return list(self.job_list)


@pytest.fixture
def session(tmp_path: Path) -> FakeSession:
    s = FakeSession(tmp_path)
    now = time.time()
    for p in history(steps=100):
        s.book.add(p)
        s.store.add_progress("dp-1", p)
    # steps 10..100 reported over the last 10 s: 9 steps/s
    s.store._db().execute("UPDATE progress SET at = ? + (step - 10) / 9.0", (now - 10,))
    return s


def get(session: FakeSession, *paths: str) -> list[tuple[int, str, bytes]]:
    """GET each path from a server running routes(session); (status, content type, body) each."""
    async def go():
        app = web.Application()
        app.add_routes(routes(session))
        server = TestServer(app)
        await server.start_server()
        out = []
        try:
            async with aiohttp.ClientSession() as http:
                for path in paths:
                    async with http.get(server.make_url(path)) as resp:
                        out.append((resp.status, resp.headers.get("Content-Type", ""), await resp.read()))
        finally:
            await server.close()
        return out
    return asyncio.run(go())


def test_the_page_and_its_files_are_served(session) -> None:
    (page, html, body), (js, js_type, _), (css, css_type, _), (missing, _, _) = get(
        session, "/", "/ui/static/jobs.js", "/ui/static/ui.css", "/ui/static/nope.js")
    assert page == 200 and html.startswith("text/html") and b"/ui/static/jobs.js" in body
    assert js == css == 200 and js_type.startswith("text/javascript") and css_type.startswith("text/css")
    assert missing == 404


# A resource the browser would load from elsewhere: the pages must work offline.
EXTERNAL = re.compile(rb"""(?:src|href)\s*=\s*["']?(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import|"""
                      rb"""fetch\(\s*["'`](?:https?:)?//""")


@pytest.mark.parametrize("name", sorted(files()))
def test_no_page_file_loads_anything_from_elsewhere(name) -> None:
    assert not EXTERNAL.search(files()[name]), f"{name} refers to an outside resource"


def test_the_job_list_has_running_jobs_first_with_progress(session) -> None:
    status, _, body = get(session, "/ui/api/jobs")[0]
    data = json.loads(body)
    assert status == 200 and data["framework"] == {"id": "fw-1", "master": "127.0.0.1:9",
                                                   "master_ui": "http://127.0.0.1:9/"}
    rows = {r["job"]: r for r in data["jobs"]}
    assert rows["dp-1"]["step"] == 100 and rows["dp-1"]["steps_per_s"] == pytest.approx(9.0, rel=0.01)
    assert rows["w-1"]["waiting_reason"] == "0/1 agents can host process 0"


def test_a_job_detail_has_processes_on_hosts_and_curves(session) -> None:
    status, _, body = get(session, "/ui/api/jobs/dp-1")[0]
    d = json.loads(body)
    assert status == 200
    assert [(h["host"], h["procs"]) for h in d["hosts"]] == [("agent-0", [0, 1, 4]), ("agent-1", [2, 3, 5])]
    assert len(d["curves"]["train"]) == 10 and d["curves"]["train"][-1]["step"] == 100
    assert get(session, "/ui/api/jobs/nope")[0][0] == 404


def test_after_resume_the_curves_come_from_the_store(session) -> None:
    session.book = ProgressBook()   # a resumed framework's book starts empty
    d = json.loads(get(session, "/ui/api/jobs/dp-1")[0][2])
    assert len(d["curves"]["train"]) == 10


def test_metrics_are_prometheus_text(session) -> None:
    status, ctype, body = get(session, "/metrics")[0]
    assert status == 200 and ctype == CONTENT_TYPE
    fams = parse_exposition(body.decode())
    assert fams["scylla_framework_jobs"].value(state="RUNNING") == 1.0
    assert fams["scylla_framework_job_step"].value(job="dp-1") == 100.0


def test_the_view_answers_before_the_session_is_connected(session) -> None:
    session.shell = None
    session.job_list = []
    status, _, body = get(session, "/ui/api/jobs")[0]
    assert status == 200 and json.loads(body) == {"framework": {"id": None, "master": None, "master_ui": None},
                                                  "jobs": []}
    status, _, body = get(session, "/ui/api/log?agent=a&task=t")[0]
    assert status == 503 and b"not connected" in body


def test_logs_of_an_unreachable_master_are_a_clear_502(session) -> None:
    status, _, body = get(session, "/ui/api/log?agent=a&task=t&file=stdout")[0]
    assert status == 502 and b"master" in body
