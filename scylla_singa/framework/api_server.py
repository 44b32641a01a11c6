"""The framework's HTTP endpoint: progress intake from containers, and job control.

Served on an address containers can reach (the swarm advertise address of
the host), in its own thread with its own event loop:

    POST /progress              PROGRESS JSON from the runtime (never blocks training)
    GET  /api/jobs              every job with state and latest progress
    GET  /api/jobs/{id}         one job's record and progress history
    POST /api/jobs/{id}/kill    stop a job
    GET  /health                open: {"ok": true} and nothing else

A report needs its job's progress token, every other route but /health the
framework's control token (api_auth says how each is carried). A report is
read only up to progress_report.PROGRESS_BODY_LIMIT bytes and checked field
by field before anything keeps it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

from aiohttp import web

from .api_auth import bearer, control_middleware, refusal, same_secret
from .progress_book import ProgressBook
from .progress_report import PROGRESS_BODY_LIMIT, BadProgress, decode_progress

JobsView = Callable[[], list[dict[str, Any]]]
ProgressTokenOf = Callable[[str], "str | None"]   # a job id -> its progress token (None: no such job of ours)


class ApiServer:
    def __init__(self, book: ProgressBook, jobs_view: JobsView, on_progress: Callable[[dict], bool | None],
                 on_kill: Callable[[str], bool], token: str, progress_token_of: ProgressTokenOf,
                 host: str = "0.0.0.0", port: int = 0) -> None:
        self.book, self.jobs_view, self.on_progress, self.on_kill = book, jobs_view, on_progress, on_kill
        self.token, self.progress_token_of, self.host, self.port = token, progress_token_of, host, port
        self.extra_routes: list[web.RouteDef] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=PROGRESS_BODY_LIMIT, middlewares=[control_middleware(self.token)])
        app.add_routes([web.post("/progress", self._progress), web.get("/api/jobs", self._jobs),
                        web.get("/api/jobs/{job}", self._job), web.post("/api/jobs/{job}/kill", self._kill),
                        web.get("/health", self._health)] + self.extra_routes)
        return app

    def start(self) -> int:
        """Start serving; returns the bound port. Raises if it cannot bind."""
        self._thread = threading.Thread(target=self._run, name="scylla-api", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error:
            raise RuntimeError(f"cannot serve the framework API on {self.host}:{self.port}: {self._error}")
        return self.port

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as exc:  # noqa: BLE001 - reported to start()
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()

    async def _serve(self) -> None:
        # A stop must not wait on a client still sending (or refused mid-body): handlers are cancelled and
        # open connections get 2 s, as the master's server does.
        self._runner = web.AppRunner(self.app(), access_log=None, handler_cancellation=True, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        loop = self._loop
        if loop is None or not loop.is_running():
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), loop).result(30)  # type: ignore[union-attr]
        loop.call_soon_threadsafe(loop.stop)
        if self._thread:
            self._thread.join(10)

    async def _progress(self, request: web.Request) -> web.Response:
        """Take a report in: token present (401), body bounded (413) and well formed (400), the token of the
        job it names (403); only then is it handed on. Never slower than reading 64 KiB."""
        given = bearer(request.headers.get("Authorization"))
        if given is None:
            return unread_body_refusal(401, "POST /progress needs `Authorization: Bearer <token>` with the progress "
                                            "token of the job it reports for (its containers have it in "
                                            "$SCYLLA_PROGRESS_TOKEN)")
        body = await read_at_most(request, PROGRESS_BODY_LIMIT)
        if body is None:
            return unread_body_refusal(413, f"bad progress: the body is over {PROGRESS_BODY_LIMIT} bytes")
        try:
            p = decode_progress(body)
        except BadProgress as exc:
            return refusal(400, f"bad progress: {exc}")
        if not same_secret(given, self.progress_token_of(p["job"])):
            return refusal(403, f"progress for job {p['job']!r} refused: the token is not that job's progress token")
        try:
            keep = self.on_progress(p) is not False  # False: not of a current attempt of ours
        except Exception:  # noqa: BLE001 - intake never fails the runtime's POST
            keep = True
        if keep:
            self.book.add(p)
        return web.Response(status=204)

    async def _jobs(self, request: web.Request) -> web.Response:
        return web.json_response(self.jobs_view())

    async def _job(self, request: web.Request) -> web.Response:
        job = request.match_info["job"]
        for j in self.jobs_view():
            if j["job"] == job:
                return web.json_response({**j, "progress": self.book.history(job)})
        return web.Response(status=404, text=f"no job {job}")

    async def _kill(self, request: web.Request) -> web.Response:
        if not same_secret(bearer(request.headers.get("Authorization")), self.token):
            return refusal(403, "kill needs the control token as `Authorization: Bearer <token>` (a browser's "
                                "sign-in cookie is for reading only)")
        job = request.match_info["job"]
        return web.Response(status=202) if self.on_kill(job) else web.Response(status=404, text=f"no job {job}")

    async def _health(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})


async def read_at_most(request: web.Request, limit: int) -> bytes | None:
    """The request's body, or None as soon as it is over `limit` bytes (the rest is never read).

    A declared Content-Length over the limit is refused before reading; a
    chunked body is read piece by piece (one read may return less than asked).
    """
    if request.content_length is not None and request.content_length > limit:
        return None
    chunks, size = [], 0
    while chunk := await request.content.read(limit + 1 - size):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return None
    return b"".join(chunks)


def unread_body_refusal(status: int, message: str) -> web.Response:
    """A refusal that closes the connection: the rest of the body is never read (nor drained for keep-alive)."""
    resp = refusal(status, message)
    resp.force_close()
    return resp
