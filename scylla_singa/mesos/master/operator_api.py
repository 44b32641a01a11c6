"""`POST /api/v1` (and `/master/api/v1`): the master's v1 operator API in JSON or protobuf.

Each call type is one entry of `OperatorEndpoint.handlers`, a function from
the call's payload to the Response payload (operator_v1.py shapes it); a
call this master does not serve is answered 501 with the reason, never
ignored. SUBSCRIBE streams the events of operator_events.py in the format
Accept chose.

Answers in Mesos's order: 307 to `//LEADER/master/api/v1` from a standby
(503 while no leader is known), 405 with `Allow: POST`, 400/415 for the body,
400 "Failed to validate master::Call: ..." (call_validation), 406 when Accept
allows neither format (checked on every operator call, as Mesos does), then
the call's own answer: 200 with the Response, or with no body for a call
that changes something (Mesos's OK; 202 Accepted for RESERVE/UNRESERVE_RESOURCES,
CREATE/DESTROY_VOLUMES and GROW/SHRINK_VOLUME, as Mesos answers them). JSON is written as Mesos's writer does (defaults
included, codec.encode_as_mesos).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aiohttp import web

from scylla_singa.mesos.api import logging_level
from scylla_singa.mesos.api.call_validation import validate_master_operator_call
from scylla_singa.mesos.api.codec import MASTER_OPERATOR, MediaType, encode_response
from scylla_singa.mesos.api.fields import value
from scylla_singa.mesos.api.http_auth import PRINCIPAL_KEY
from scylla_singa.mesos.api.http_answers import CallRefused, answer_media_type, method_not_allowed, read_call, text
from . import operator_v1
from scylla_singa.mesos.api.event_stream import EventStream
from .master_core import Master
from .master_records import CallError
from .master_metrics import metrics_json
from .maintenance import MaintenanceInvalid
from .maintenance_calls import start_maintenance, stop_maintenance, update_schedule
from .quota_calls import QuotaRefused, quota_status, remove_quota, set_quota, update_quota
from .reservation_calls import (create_volumes, destroy_volumes, grow_volume, reserve_resources, shrink_volume,
                                unreserve_resources)
from .scheduler_http import leader_redirect

log = logging.getLogger(__name__)
JsonDict = dict[str, Any]

# Calls Mesos answers 202 Accepted (the operation is applied on the agent after the answer).
ANSWERED_ACCEPTED = frozenset({"RESERVE_RESOURCES", "UNRESERVE_RESOURCES", "CREATE_VOLUMES", "DESTROY_VOLUMES",
                               "GROW_VOLUME", "SHRINK_VOLUME"})


class OperatorError(Exception):
    """A call refused by its handler: HTTP status and Mesos's text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class OperatorEndpoint:
    """The master's operator API (see the module docstring)."""

    def __init__(self, master: Master) -> None:
        self.m = master
        self.handlers: dict[str, Callable[[JsonDict], JsonDict | None]] = {
            "GET_HEALTH": lambda _: {"healthy": True},
            "GET_FLAGS": lambda _: operator_v1.get_flags(self.m),
            "GET_VERSION": lambda _: operator_v1.get_version(),
            "GET_METRICS": lambda _: operator_v1.metric_list(metrics_json(self.m)),
            "GET_LOGGING_LEVEL": lambda _: {"level": logging_level.logging_level()},
            "SET_LOGGING_LEVEL": self._set_logging_level,
            "LIST_FILES": self._no_files, "READ_FILE": self._no_files,
            "GET_STATE": lambda _: operator_v1.get_state(self.m),
            "GET_AGENTS": lambda _: operator_v1.get_agents(self.m),
            "GET_FRAMEWORKS": lambda _: operator_v1.get_frameworks(self.m),
            "GET_EXECUTORS": lambda _: operator_v1.get_executors(self.m),
            "GET_OPERATIONS": lambda _: {"operations": self.m.operation_feedback.operations()},
            "GET_TASKS": lambda _: operator_v1.get_tasks(self.m),
            "GET_ROLES": lambda _: operator_v1.get_roles(self.m),
            "GET_WEIGHTS": lambda _: {"weight_infos": [{"role": r, "weight": w}
                                                       for r, w in sorted(self.m.cfg.role_weights.items())]},
            "UPDATE_WEIGHTS": self._update_weights,
            "GET_MASTER": lambda _: operator_v1.get_master(self.m),
            "GET_MAINTENANCE_STATUS": lambda _: {"status": self.m.maintenance.status()},
            "GET_MAINTENANCE_SCHEDULE": lambda _: {"schedule": {"windows": self.m.maintenance.windows}},
            "UPDATE_MAINTENANCE_SCHEDULE": lambda body: update_schedule(self.m, body),
            "START_MAINTENANCE": lambda body: start_maintenance(self.m, body),
            "STOP_MAINTENANCE": lambda body: stop_maintenance(self.m, body),
            "GET_QUOTA": lambda _: {"status": quota_status(self.m)},
            "UPDATE_QUOTA": lambda body: update_quota(self.m, body),
            "SET_QUOTA": lambda body: set_quota(self.m, body),
            "REMOVE_QUOTA": lambda body: remove_quota(self.m, body),
            "DRAIN_AGENT": self._drain_agent,
            "DEACTIVATE_AGENT": lambda body: self._agent_active(body, False),
            "REACTIVATE_AGENT": lambda body: self._agent_active(body, True),
            "MARK_AGENT_GONE": self._mark_agent_gone,
        }
        # Calls checked against who asks: TEARDOWN (ACL teardown_frameworks); the reservation and volume calls
        # (their ACLs; a reservation's or volume's principal must be who asks).
        self.handlers_by_principal: dict[str, Callable[[JsonDict, str | None], JsonDict | None]] = {
            "TEARDOWN": self._teardown,
            "RESERVE_RESOURCES": lambda body, principal: reserve_resources(self.m, body, principal),
            "UNRESERVE_RESOURCES": lambda body, principal: unreserve_resources(self.m, body, principal),
            "CREATE_VOLUMES": lambda body, principal: create_volumes(self.m, body, principal),
            "DESTROY_VOLUMES": lambda body, principal: destroy_volumes(self.m, body, principal),
            "GROW_VOLUME": lambda body, principal: grow_volume(self.m, body, principal),
            "SHRINK_VOLUME": lambda body, principal: shrink_volume(self.m, body, principal),
        }

    async def handle(self, request: web.Request) -> web.StreamResponse:
        not_leading = leader_redirect(self.m, "/api/v1")
        if not_leading is not None:
            return not_leading
        if request.method != "POST":
            return method_not_allowed(request.method)
        try:
            call, _ = await read_call(request, MASTER_OPERATOR, validate_master_operator_call)
            media_type = answer_media_type(request)
        except CallRefused as refused:
            return refused.response
        kind = call["type"]
        if kind == "SUBSCRIBE":
            return await self._subscribe(request, media_type)
        handler, by_principal = self.handlers.get(kind), self.handlers_by_principal.get(kind)
        if handler is None and by_principal is None:
            return text(501, f"{kind} is not supported by this master")
        try:
            body = call.get(kind.lower()) or {}
            if by_principal is not None:
                payload = by_principal(body, request.get(PRINCIPAL_KEY))
            else:
                assert handler is not None
                payload = handler(body)
        except (OperatorError, QuotaRefused, CallError) as exc:
            return text(exc.status, exc.message)
        except MaintenanceInvalid as exc:
            return text(400, str(exc))
        if payload is None:
            if kind in ANSWERED_ACCEPTED:
                return web.Response(status=202)
            return web.Response(status=200)   # Mesos answers a call that changes something 200 OK, no body
        body = encode_response(MASTER_OPERATOR, {"type": kind, kind.lower(): payload}, media_type, as_mesos=True)
        return web.Response(status=200, body=body, content_type=media_type)

    async def _subscribe(self, request: web.Request, media_type: MediaType) -> web.StreamResponse:
        resp = web.StreamResponse(status=200, headers={"Content-Type": media_type, "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        stream = EventStream(resp, MASTER_OPERATOR, media_type, as_mesos=True)
        self.m.operator_events.subscribe(stream)
        try:
            await stream.serve()
        finally:
            self.m.operator_events.unsubscribe(stream)
        return resp

    # ---- calls that change something ---------------------------------------------
    def _set_logging_level(self, body: JsonDict) -> None:
        logging_level.apply_call(body, self.m.loop)

    def _no_files(self, body: JsonDict) -> None:
        raise OperatorError(404, f"No file or directory found at path '{body.get('path', '')}'")

    def _update_weights(self, body: JsonDict) -> None:
        for info in body.get("weight_infos") or ():
            if float(info["weight"]) <= 0:
                raise OperatorError(400, f"Invalid weight '{info['weight']}': weights must be positive")
        for info in body.get("weight_infos") or ():
            role = info.get("role") or "*"
            self.m.cfg.role_weights[role] = self.m.store.weights[role] = float(info["weight"])
            self.m.allocator.set_role_weight(role, float(info["weight"]))
        self.m.save_operator_settings()
        self.m.schedule_allocation()

    def _agent(self, body: JsonDict) -> Any:
        agent_id = value(body.get("agent_id")) or ""
        agent = self.m.agent_registry.agents.get(agent_id)
        if agent is None:
            raise OperatorError(400, f"Unknown agent {agent_id}")
        return agent

    def _agent_active(self, body: JsonDict, active: bool) -> None:
        """DEACTIVATE_AGENT / REACTIVATE_AGENT: stop or resume offering the agent's resources."""
        agent = self._agent(body)
        agent.operator_deactivated = not active
        self.m.agent_registry.apply_health(agent)

    def _drain_agent(self, body: JsonDict) -> None:
        """DRAIN_AGENT: no new offers for the agent, and its tasks are killed."""
        agent = self._agent(body)
        self._agent_active(body, False)
        for task in list(agent.tasks.values()):
            task.kill_grace = self.m.cfg.default_kill_grace
            self.m.agent_registry.send_kill(task)

    def _mark_agent_gone(self, body: JsonDict) -> None:
        self.m.agent_registry.mark_gone(self._agent(body))

    def _teardown(self, body: JsonDict, principal: str | None = None) -> None:
        fw = self.m.frameworks.get(value(body.get("framework_id")) or "")
        if fw is None:
            raise OperatorError(400, f"Unknown framework {value(body.get('framework_id'))}")
        acls = self.m.cfg.acls
        if acls is not None and not acls.may_teardown(principal, fw.principal):
            raise OperatorError(403, f"Principal '{principal}' is not authorized to tear down framework {fw.id} "
                                     f"of principal '{fw.principal}' (ACL teardown_frameworks)")
        self.m.handle_call(fw, {"type": "TEARDOWN"})
