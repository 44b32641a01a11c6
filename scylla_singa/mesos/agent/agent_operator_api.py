"""`POST /api/v1` on the agent: the agent's v1 operator API in JSON or protobuf (read-only calls).

Answers as the master's operator API does (mesos/master/operator_api.py):
405 with `Allow: POST`, 400/415 for the body, 400 "Failed to validate
agent::Call: ...", 406 when Accept allows neither format, then the answer.
The read-only calls are served (shapes in agent_views.py), and the
standalone container calls (LAUNCH/WAIT/KILL/REMOVE_CONTAINER without a
parent: standalone_containers.py). Nested containers (a container id with
a parent), attach and resource provider calls are answered 501 with the
reason (the agent runs Docker containers and processes, not nested Mesos
containers); a parent that does not exist is 400, as from Mesos.
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
from .standalone_containers import Refused, StandaloneContainers

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .agent_http import AgentHTTP

JsonDict = dict[str, Any]
NOT_HERE = ("this agent runs Docker containers and processes, not nested Mesos containers, and has no "
            "resource providers")
SIMULATED = "a simulated agent runs no processes"
STANDALONE_CALLS = ("LAUNCH_CONTAINER", "WAIT_CONTAINER", "KILL_CONTAINER", "REMOVE_CONTAINER")


class AgentOperatorEndpoint:
    """The read-only agent operator API of one agent."""

    def __init__(self, core: AgentCore, http: AgentHTTP, standalone: StandaloneContainers | None = None) -> None:
        self.core = core
        self.standalone = standalone   # None: a simulated agent
        self.handlers: dict[str, Callable[[JsonDict], JsonDict]] = {
            "GET_HEALTH": lambda _: {"healthy": True},
            "GET_FLAGS": lambda _: {"flags": [{"name": k, "value": v} for k, v in http.flags.items()]},
            "GET_VERSION": lambda _: {"version_info": dict(build_info())},
            "GET_METRICS": lambda _: {"metrics": [{"name": k, "value": v}
                                                  for k, v in http.metrics_snapshot().items()]},
            "GET_LOGGING_LEVEL": lambda _: {"level": 1 if logging.getLogger("scylla_singa").getEffectiveLevel()
                                            <= logging.DEBUG else 0},
            "GET_STATE": lambda _: agent_views.get_state(core),
            "GET_CONTAINERS": self._get_containers,
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
        if kind in STANDALONE_CALLS:
            return await self._container_call(kind, call[kind.lower()], media_type)
        handler = self.handlers.get(kind)
        if handler is None:
            return text(501, f"{kind} is not supported by this agent: {NOT_HERE}")
        body = encode_response(AGENT_OPERATOR, {"type": kind, kind.lower(): handler(call.get(kind.lower()) or {})},
                               media_type, as_mesos=True)
        return web.Response(status=200, body=body, content_type=media_type)

    def _get_containers(self, body: JsonDict) -> JsonDict:
        out = agent_views.get_containers(self.core)
        if body.get("show_standalone") and self.standalone is not None:
            out["containers"] += self.standalone.running()
        return out

    async def _container_call(self, kind: str, body: JsonDict, media_type: str) -> web.Response:
        """A container call: standalone containers are run here; a nested one (its id has a parent) is not."""
        container_id = body["container_id"]   # checked by validate_agent_operator_call
        parent = container_id.get("parent")
        if parent is not None:
            return self._nested(kind, container_id)
        if self.standalone is None:
            return text(501, f"{kind} is not supported by this agent: {SIMULATED}")
        try:
            if kind == "LAUNCH_CONTAINER":
                return web.Response(status=await self.standalone.launch(body))
            if kind == "WAIT_CONTAINER":
                answer = {"type": kind, "wait_container": await self.standalone.wait(body)}
                return web.Response(status=200, body=encode_response(AGENT_OPERATOR, answer, media_type,
                                                                     as_mesos=True), content_type=media_type)
            (self.standalone.kill if kind == "KILL_CONTAINER" else self.standalone.remove)(body)
            return web.Response(status=200)
        except Refused as refused:
            return text(refused.status, str(refused))

    def _nested(self, kind: str, container_id: JsonDict) -> web.Response:
        parent = container_id["parent"].get("value", "")
        known = {t.container_id for t in self.core.tasks.values()}
        if self.standalone is not None:
            known |= set(self.standalone.containers)
        if parent not in known:
            if kind == "LAUNCH_CONTAINER":
                return text(400, f"Parent container {parent} does not exist")
            return text(404, f"Container {parent}.{container_id.get('value', '')} cannot be found")
        return text(501, f"{kind} of a nested container is not supported by this agent: {NOT_HERE}")
