"""`POST /api/v1/scheduler` (and `/master/api/v1/scheduler`): the v1 scheduler API in JSON or protobuf.

The handler only translates: the body is decoded and validated by
mesos/api (codec, call_validation) into the dict form the Master handles,
and events go out in the format the framework subscribed with (chosen by
Accept on SUBSCRIBE, exactly as Mesos chooses: JSON when acceptable, else
protobuf, else 406). Accept is checked on SUBSCRIBE only; other calls
answer 202 with no body, whatever they accept (Mesos does the same).

Answers, in Mesos's order (tests/fixtures/apache_mesos/errors/): 503 with no
leader, 307 to `//LEADER/master/api/v1/scheduler` from a standby, 405 with
`Allow: POST`, 401 without credentials when the master has some, 400/415
for the body, 400 "Failed to validate scheduler::Call: ..." for a call Mesos
refuses, then the framework checks of `Master.check_call` (400 unknown
framework or stream, 403 not subscribed).
"""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web

from scylla_singa.mesos.api.call_validation import CallInvalid, validate_scheduler_call
from scylla_singa.mesos.api.codec import (SCHEDULER, CodecError, decode_call_noting_finite, request_media_type,
                                          response_media_type)
from scylla_singa.mesos.api.credentials import authenticate
from scylla_singa.mesos.api.fields import value
from scylla_singa.mesos.api.http_auth import unauthorized
from scylla_singa.mesos.api.http_answers import (CallRefused, accepted, method_not_allowed, read_call, redirect,
                                                 text)
from scylla_singa.mesos.api.event_stream import EventStream
from scylla_singa.mesos.api.quick_lane import AnswerWriter, RequestHead
from .master_core import Master
from .master_records import CallError, FrameworkRec


def leader_redirect(master: Master, path: str) -> web.Response | None:
    """What a master that does not lead answers instead of serving `path`: 503 or 307 (None: it leads)."""
    if master.leader_address is None:
        return None
    if master.leader_address == "":
        return text(503, "No leader elected")
    return redirect(f"//{master.leader_address}/master{path.removeprefix('/master')}")


# Calls the quick lane leaves to `handle`: SUBSCRIBE streams, UPDATE_FRAMEWORK answers 200, UNKNOWN 501.
_FULL_SERVER_CALLS = frozenset({"SUBSCRIBE", "UPDATE_FRAMEWORK", "UNKNOWN"})


class SchedulerEndpoint:
    """The scheduler API of one Master (see the module docstring)."""

    def __init__(self, master: Master) -> None:
        self.m = master
        self.answers = AnswerWriter()
        self.quick_answers = 0   # calls answered in the quick lane (the tests see that it is taken)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        not_leading = leader_redirect(self.m, request.path)
        if not_leading is not None:
            return not_leading
        if request.method != "POST":
            return method_not_allowed(request.method)
        principal = None
        if self.m.cfg.credentials is not None:
            principal = authenticate(request.headers.get("Authorization"), self.m.cfg.credentials)
            if principal is None:
                return unauthorized("frameworks authenticate with a principal of the master's credentials file")
        try:
            call, _ = await read_call(request, SCHEDULER, lambda c: validate_scheduler_call(c, principal))
        except CallRefused as refused:
            return refused.response
        if self.m.stopping:
            # pymesos aborts its driver on any non-2xx answer to a call: while this master shuts
            # down, calls are accepted and dropped (ACKs are redone against the next master) and
            # SUBSCRIBE gets 503, which pymesos retries.
            return text(503, "Master is shutting down") if call["type"] == "SUBSCRIBE" else accepted()
        if call["type"] == "UNKNOWN":
            return text(501, "Received 'UNKNOWN' call")
        if call["type"] == "SUBSCRIBE":
            try:
                return await self._subscribe(request, call, principal)
            except CallError as exc:
                return text(exc.status, exc.message)
        refused = self._apply(call, request.headers.get("Mesos-Stream-Id"), principal)
        if refused is not None:
            return text(refused.status, refused.message)
        if call["type"] == "UPDATE_FRAMEWORK":
            return web.Response(status=200)   # Mesos answers this one call 200 OK, with no body
        return accepted()

    def _apply(self, call: dict[str, Any], stream_id: str | None, principal: str | None) -> CallError | None:
        """Check and apply a validated non-SUBSCRIBE call; the CallError that refused it, if one did."""
        try:
            fw = self.m.check_call(call, stream_id, principal)
            count_call(self.m, fw, call)
            self.m.handle_call(fw, call)
        except CallError as exc:
            return exc
        return None

    def quick_answer(self, head: RequestHead, body: bytes) -> bytes | None:
        """The quick lane's answer to a call (mesos/api/quick_lane.py): the bytes `handle` would answer.

        Only a leading, running master's ACCEPT, DECLINE, ACKNOWLEDGE, ... that
        decodes and validates is answered here (202, or the 400/403 of the
        framework checks); anything else returns None before any effect, and
        `handle` answers it on aiohttp. The checks run in `handle`'s order.
        """
        m = self.m
        if m.leader_address is not None or m.stopping:
            return None
        principal = None
        if m.cfg.credentials is not None:
            principal = authenticate(head.header("authorization"), m.cfg.credentials)
            if principal is None:
                return None
        try:
            call, numbers_finite = decode_call_noting_finite(SCHEDULER, body,
                                                             request_media_type(head.header("content-type")))
            validate_scheduler_call(call, principal, numbers_finite)
        except (CodecError, CallInvalid):
            return None
        if call["type"] in _FULL_SERVER_CALLS:
            return None
        refused = self._apply(call, head.header("mesos-stream-id"), principal)
        self.quick_answers += 1
        if refused is not None:
            return self.answers.text(refused.status, refused.message)
        return self.answers.empty(202)

    async def _subscribe(self, request: web.Request, call: dict[str, Any], principal: str | None
                         ) -> web.StreamResponse:
        try:
            media_type = response_media_type(request.headers.get("Accept"))
        except CodecError as exc:
            return text(exc.status, exc.message)
        if "Mesos-Stream-Id" in request.headers:
            return text(400, "Subscribe calls should not include the 'Mesos-Stream-Id' header")
        info = self.m.check_subscribe(call, principal, request.remote)
        stream_id = str(uuid.uuid4())
        resp = web.StreamResponse(status=200, headers={"Content-Type": media_type, "Mesos-Stream-Id": stream_id,
                                                       "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        stream = EventStream(resp, SCHEDULER, media_type)
        if value(info.get("id")) in self.m.removed_framework_ids:
            # Mesos answers a removed framework's id on the stream: one ERROR, then the end
            stream.send({"type": "ERROR", "error": {"message": "Framework has been removed"}})
            stream.close()
            await stream.pump()
            await resp.write_eof()
            return resp
        fw_id = self.m.subscribe(call, info, stream, principal, stream_id, request.remote)
        fw = self.m.frameworks[fw_id]
        for key, n in stream.counts.items():  # SUBSCRIBED and the first HEARTBEAT, sent before it was known
            fw.counters[key] = fw.counters.get(key, 0) + n
        stream.counts = fw.counters
        count_call(self.m, fw, call)
        try:
            await stream.serve()
        finally:
            self.m.stream_closed(fw_id, stream)
        return resp


# The master's message counters (Mesos's names, from its v0 messages) each scheduler call counts as.
CALL_COUNTERS = {
    "TEARDOWN": "master/messages_unregister_framework", "ACCEPT": "master/messages_launch_tasks",
    "DECLINE": "master/messages_decline_offers", "REVIVE": "master/messages_revive_offers",
    "SUPPRESS": "master/messages_suppress_offers", "KILL": "master/messages_kill_task",
    "ACKNOWLEDGE": "master/messages_status_update_acknowledgement", "RECONCILE": "master/messages_reconcile_tasks",
    "RECONCILE_OPERATIONS": "master/messages_reconcile_operations",
    "ACKNOWLEDGE_OPERATION_STATUS": "master/messages_operation_status_update_acknowledgement"}   # MESSAGE and REQUEST: the Master counts


# Each call type's key in a framework's counters, made once (four calls per task count here).
_CALL_KEYS = {kind: f"calls/{kind.lower()}" for kind in (*CALL_COUNTERS, "SUBSCRIBE", "UPDATE_FRAMEWORK")}


def count_call(m: Master, fw: FrameworkRec, call: dict[str, Any]) -> None:
    """Count an accepted call in the master's and the framework's metrics (a few dict updates)."""
    kind = call["type"]
    if kind == "SUBSCRIBE":
        m.count("master/messages_reregister_framework" if call.get("framework_id") else
                "master/messages_register_framework")
    elif kind in CALL_COUNTERS:
        m.count(CALL_COUNTERS[kind])
    c = fw.counters
    key = _CALL_KEYS.get(kind) or f"calls/{kind.lower()}"
    c[key] = c.get(key, 0) + 1
    if kind == "ACCEPT":
        body = call["accept"]
        c["offers/accepted"] = c.get("offers/accepted", 0) + len(body.get("offer_ids") or ())
        for op in body.get("operations") or ():
            key = f"operations/{str(op.get('type', '')).lower()}"
            c[key] = c.get(key, 0) + 1
    elif kind == "DECLINE":
        c["offers/declined"] = c.get("offers/declined", 0) + len(call["decline"].get("offer_ids") or ())
    elif kind == "ACKNOWLEDGE":
        m.count("master/valid_status_update_acknowledgements")

