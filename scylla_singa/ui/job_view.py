"""The framework's job view and Prometheus endpoint, added to its ApiServer through SessionWiring.ui_routes.

    GET /                    the job view (static/jobs.html + jobs.js, polls the two below)
    GET /ui/api/jobs         {"framework": {...}, "jobs": [job_model.job_row, ...]}
    GET /ui/api/jobs/{job}   job_model.job_detail (404 for an unknown job)
    GET /ui/log              the log viewer page; GET /ui/api/log reads a task's stdout/stderr
                             from its agent, found through the master's /master/state
    GET /ui/static/{name}    script and style
    GET /metrics             Prometheus text (job_model.framework_metrics)

`routes(session)` is called before the session connects; handlers look at
the session when a request comes. Jobs are read under the shell's lock
(the core mutates them on the shell's thread), progress rates outside it.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Protocol

import aiohttp
from aiohttp import web

from scylla_singa.framework.model import Job, JobState
from scylla_singa.framework.progress_book import ProgressBook
from scylla_singa.framework.store import JobStore
from . import assets
from .agent_files import LogError, TIMEOUT as HTTP_TIMEOUT, agent_url_from_state, parse_request, read_task_file
from .job_model import RATE_WINDOW_S, framework_metrics, job_detail, job_row, steps_per_s
from .prometheus import CONTENT_TYPE, render

RATE_ROWS = 400  # newest progress rows read from the store per job for its rate


class SessionLike(Protocol):
    """What the job view needs of runner.Session."""

    book: ProgressBook
    store: JobStore
    shell: Any
    credential: Any   # a Credential (mesos.api.credentials) the master and agents accept, or None

    def jobs(self) -> list[Job]: ...


class JobView:
    """Request handlers bound to one framework session."""

    def __init__(self, session: SessionLike) -> None:
        self.s = session

    # ---- reading the session --------------------------------------------
    def _lock(self) -> AbstractContextManager:
        shell = getattr(self.s, "shell", None)
        return shell.lock if shell is not None else nullcontext()

    def _rate(self, job_id: str, now: float) -> float | None:
        try:
            return steps_per_s(self.s.store.progress(job_id, limit=RATE_ROWS), now, RATE_WINDOW_S)
        except Exception:  # noqa: BLE001 - a busy or missing store only costs the rate
            return None

    def _history(self, job_id: str) -> list[dict[str, Any]]:
        """The book's history; after `resume` the book starts empty, so fall back to the store."""
        history = self.s.book.history(job_id)
        if not history:
            try:
                history = self.s.store.progress(job_id, limit=5000)
            except Exception:  # noqa: BLE001
                history = []
        return history

    def _rates(self, jobs: list[Job]) -> dict[str, float | None]:
        now = time.time()
        return {j.job_id: self._rate(j.job_id, now) if j.state is JobState.RUNNING else None for j in jobs}

    def framework(self) -> dict[str, Any]:
        shell = getattr(self.s, "shell", None)
        driver = getattr(shell, "driver", None)
        master = shell.master_address() if shell is not None else None
        return {"id": getattr(driver, "framework_id", None), "master": master,
                "master_ui": f"http://{master}/" if master else None}

    # ---- handlers -------------------------------------------------------
    async def index(self, request: web.Request) -> web.Response:
        return assets.page("jobs.html")

    async def jobs(self, request: web.Request) -> web.Response:
        jobs = self.s.jobs()
        rates = self._rates(jobs)
        with self._lock():
            rows = [job_row(j, self.s.book.summary(j.job_id), rates[j.job_id]) for j in jobs]
        rows.sort(key=lambda r: (r["terminal"], -r["submitted_at"]))
        return web.json_response({"framework": self.framework(), "jobs": rows}, headers={"Cache-Control": "no-store"})

    async def job(self, request: web.Request) -> web.Response:
        job_id = request.match_info["job"]
        job = next((j for j in self.s.jobs() if j.job_id == job_id), None)
        if job is None:
            return web.json_response({"error": f"no job {job_id}"}, status=404)
        rate = self._rates([job])[job_id]
        history = self._history(job_id)
        with self._lock():
            detail = job_detail(job, history, self.s.book.summary(job_id), rate)
        return web.json_response(detail, headers={"Cache-Control": "no-store"})

    async def metrics(self, request: web.Request) -> web.Response:
        jobs = self.s.jobs()
        rates = self._rates(jobs)
        with self._lock():
            families = framework_metrics(jobs, {j.job_id: self.s.book.summary(j.job_id) for j in jobs}, rates)
        return web.Response(body=render(families).encode(), headers={"Content-Type": CONTENT_TYPE})

    async def log_page(self, request: web.Request) -> web.Response:
        return assets.page("log.html")

    async def log(self, request: web.Request) -> web.Response:
        """A chunk of a task's stdout/stderr: the agent's address comes from the master's /master/state."""
        try:
            agent_id, task_id, name, offset = parse_request(request.query)
            master = self.framework()["master"]
            if not master:
                raise LogError(503, "the framework is not connected to a master")
            credential = self.s.credential
            async with aiohttp.ClientSession(headers=credential.headers() if credential else None) as http:
                try:
                    async with http.get(f"http://{master}/master/state", timeout=HTTP_TIMEOUT) as resp:
                        state = await resp.json(content_type=None)
                except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                    raise LogError(502, f"cannot read the master's state at {master}: "
                                        f"{exc.__class__.__name__}") from None
                agent_url = agent_url_from_state(state, agent_id)
                if agent_url is None:
                    raise LogError(404, f"the master knows no agent {agent_id} that serves files")
                chunk = await read_task_file(http, agent_url, task_id, name, offset)
        except LogError as exc:
            return web.json_response({"error": exc.message}, status=exc.status)
        hostname = next((s.get("hostname") for s in state.get("slaves", []) if s.get("id") == agent_id), agent_id)
        return web.json_response({**chunk, "task": task_id, "hostname": hostname, "file": name},
                                 headers={"Cache-Control": "no-store"})


def routes(session: SessionLike) -> list[web.RouteDef]:
    """The job view's routes for the framework's ApiServer (given to the session as SessionWiring.ui_routes)."""
    view = JobView(session)
    return [web.get("/", view.index), web.get("/ui/api/jobs", view.jobs), web.get("/ui/api/jobs/{job}", view.job),
            web.get("/ui/log", view.log_page), web.get("/ui/api/log", view.log), web.get("/metrics", view.metrics),
            assets.route()]
