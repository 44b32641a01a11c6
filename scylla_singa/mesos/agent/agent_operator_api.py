"""`POST /api/v1` on the agent: the agent's v1 operator API in JSON or protobuf (read-only calls).

Answers as the master's operator API does (mesos/master/operator_api.py):
405 with `Allow: POST`, 400/415 for the body, 400 "Failed to validate
agent::Call: ...", 406 when Accept allows neither format, then the answer.
The read-only calls are served (shapes in agent_views.py); the nested
container, attach and resource provider calls are answered 501 with the
reason (the agent runs Docker containers and processes, not nested Mesos
containers).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from scylla_singa.mesos.api.call_validation import validate_agent_operator_call
from scylla_singa.mesos.api.codec import AGENT_OPERATOR, encode_response
from scylla_singa.mesos.api.fields import build_info
from scylla_singa.mesos.api.http_answers import CallRefused, answer_media_type, method_not_allowed, read_call, text
from . import agent_views

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .agent_http import AgentHTTP

JsonDict = dict[str, Any]
NOT_HERE = ("this agent runs Docker containers and processes, not nested Mesos containers, and has no "
            "resource providers")


class AgentOperatorEndpoint:
    """The read-only agent operator API of one agent."""

    def __init__(self, core: AgentCore, http: AgentHTTP) -> None:
        self.core = core
        self.handlers: dict[str, Callable[[JsonDict], JsonDict]] = {
            "GET_HEALTH": lambda _: {"healthy": True},
            "GET_FLAGS": lambda _: {"flags": [{"name": k, "value": v} for k, v in http.flags.items()]},
            "GET_VERSION": lambda _: {"version_info": dict(build_info())},
            "GET_METRICS": lambda _: {"metrics": [{"name": k, "value": v}
                                                  for k, v in http.metrics_snapshot().items()]},
            "GET_LOGGING_LEVEL": lambda _: {"level": 1 if logging.getLogger("scylla_singa").getEffectiveLevel()
                                            <= logging.DEBUG else 0},
            "GET_STATE": lambda _: agent_views.get_state(core),
            "GET_CONTAINERS": lambda _: agent_views.get_containers(core),
            "GET_FRAMEWORKS": lambda _: agent_views.get_frameworks(core),
            "GET_EXECUTORS": lambda _: agent_views.get_executors(core),
            "GET_TASKS": lambda _: agent_views.get_tasks(core),
            "GET_AGENT": lambda _: agent_views.get_agent(core),
            "GET_OPERATIONS": lambda _: {},
            "GET_RESOURCE_PROVIDERS": lambda _: {},
        }

    async def handle(self, request: web.Request) -> web.Response:
        if request.method != "POST":
            return method_not_allowed(request.method)
        try:
            call, _ = await read_call(request, AGENT_OPERATOR, validate_agent_operator_call)
            media_type = answer_media_type(request)
        except CallRefused as refused:
            return refused.response
        kind = call["type"]
        handler = self.handlers.get(kind)
        if handler is None:
            return text(501, f"{kind} is not supported by this agent: {NOT_HERE}")
        body = encode_response(AGENT_OPERATOR, {"type": kind, kind.lower(): handler(call.get(kind.lower()) or {})},
                               media_type, as_mesos=True)
        return web.Response(status=200, body=body, content_type=media_type)
