"""The agent's v1 executor HTTP API (`POST /api/v1/executor`), the way a framework's own executor talks to it.

SUBSCRIBE opens the executor's event stream (RecordIO, in the format its
Accept asks for) and is answered SUBSCRIBED then LAUNCH of each task the
executor does not know yet; UPDATE (a task's status) and MESSAGE (to the
framework) are answered 202. Calls are decoded and checked by the codec and
call_validation (the one place for every API's checks); which executor a
call belongs to, and what it does, is ExecutorRunner's business.

Errors as Mesos answers them: 415/400 for a bad body, 405 with Allow for a
method other than POST, 400 "Executor not found" when no such executor was
started here (Mesos says which of framework and executor it lacks).
"""

from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING

from aiohttp import web

from scylla_singa.mesos.api.call_validation import validate_executor_call
from scylla_singa.mesos.api.codec import EXECUTOR, MediaType
from scylla_singa.mesos.api.event_stream import EventStream
from scylla_singa.mesos.api.fields import value
from scylla_singa.mesos.api.http_answers import CallRefused, answer_media_type, accepted, method_not_allowed, read_call, text

if TYPE_CHECKING:
    from .executor_runner import CustomExecutor, ExecutorRunner

log = logging.getLogger(__name__)


class ExecutorEndpoint:
    """`POST /api/v1/executor` for the executors `runner` started."""

    def __init__(self, runner: ExecutorRunner, authenticate: bool = False) -> None:
        self.runner = runner
        # On a secure agent every call must carry its executor's own token (MESOS_EXECUTOR_AUTHENTICATION_TOKEN,
        # as Mesos's --authenticate_http_executors): nobody else can speak for an executor's tasks.
        self.authenticate = authenticate

    def routes(self) -> list[web.RouteDef]:
        return [web.route("*", "/api/v1/executor", self.handle),
                web.route("*", "/slave(1)/api/v1/executor", self.handle)]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            return method_not_allowed(request.method)
        try:
            call, _ = await read_call(request, EXECUTOR, validate_executor_call)
        except CallRefused as refused:
            return refused.response
        framework_id, executor_id = value(call["framework_id"]), value(call["executor_id"])
        ex = self.runner.find(framework_id, executor_id)
        if ex is None:
            return text(400, f"Executor '{executor_id}' of framework '{framework_id}' cannot be found on this "
                             "agent (it was never started here, or it has terminated)")
        if self.authenticate and not _bearer_matches(request.headers.get("Authorization"), ex.token):
            return text(401, f"Unauthorized: calls for executor '{executor_id}' carry its token "
                             "(Authorization: Bearer $MESOS_EXECUTOR_AUTHENTICATION_TOKEN)")
        kind = call["type"]
        if kind == "SUBSCRIBE":
            try:
                media_type = answer_media_type(request)
            except CallRefused as refused:
                return refused.response
            return await self._subscribe(request, ex, call.get("subscribe") or {}, media_type)
        if ex.stream is None:
            return text(403, "Executor is not subscribed")
        if kind == "UPDATE":
            if not self.runner.update(ex, call["update"]["status"]):
                log.warning("executor %s sent an update for a task it does not run: %s", executor_id,
                            value(call["update"]["status"].get("task_id")))
            return accepted()
        self.runner.executor_message(ex, str((call.get("message") or {}).get("data") or ""))   # MESSAGE
        return accepted()

    async def _subscribe(self, request: web.Request, ex: CustomExecutor, body: dict,
                         media_type: MediaType) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": media_type, "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        stream = EventStream(resp, EXECUTOR, media_type)
        known = {value(t.get("task_id")) or "" for t in body.get("unacknowledged_tasks") or []
                 if isinstance(t, dict)}
        self.runner.subscribed(ex, stream, known)
        try:
            await stream.serve()
        finally:
            self.runner.disconnected(ex, stream)
        return resp


def _bearer_matches(header: str | None, token: str) -> bool:
    if not token or not header or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(header[len("Bearer "):].strip().encode(), token.encode())
