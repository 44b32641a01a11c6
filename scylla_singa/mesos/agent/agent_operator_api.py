"""`POST /api/v1` on the agent: the agent's v1 operator API in JSON or protobuf (read-only calls).

Answers as the master's operator API does (mesos/master/operator_api.py):
405 with `Allow: POST`, 400/415 for the body, 400 "Failed to validate
agent::Call: ...", 406 when Accept allows neither format, then the answer.
The read-only calls are served (shapes in agent_views.py), the
standalone container calls (LAUNCH/WAIT/KILL/REMOVE_CONTAINER without a
parent: standalone_containers.py) and the nested ones (with a parent, the
*_NESTED_CONTAINER calls, LAUNCH_NESTED_CONTAINER_SESSION and
ATTACH_CONTAINER_INPUT: nested_containers.py, container_sessions.py),
ATTACH_CONTAINER_OUTPUT of a running task or standalone container
(container_output.py). The resource provider calls are answered 501 with
the reason; a simulated agent runs no containers (501).
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from scylla_singa.mesos.api import logging_level
from scylla_singa.mesos.api.call_validation import CallInvalid, validate_agent_operator_call
from scylla_singa.mesos.api.codec import AGENT_OPERATOR, encode_response
from scylla_singa.mesos.api.fields import build_info
from scylla_singa.mesos.api.http_answers import CallRefused, answer_media_type, method_not_allowed, read_call, text
from . import agent_views
from .container_sessions import RECORDIO, attach_input, attach_output, launch_session
from .nested_containers import NestedContainers, NestedRefused
from .standalone_containers import Refused, StandaloneContainers

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .agent_http import AgentHTTP

JsonDict = dict[str, Any]
MAX_READ = 16 * 1024 * 1024   # the most one READ_FILE answers, as /files/read


class FileRefused(Exception):
    """LIST_FILES or READ_FILE answered with a 4xx; the message is the answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status

NOT_HERE = "this agent has no resource providers"
SIMULATED = "a simulated agent runs no processes"
CONTAINER_CALLS = ("LAUNCH_CONTAINER", "WAIT_CONTAINER", "KILL_CONTAINER", "REMOVE_CONTAINER")
# The older names of the nested container calls, by the call they are.
NESTED_CALLS = {"LAUNCH_NESTED_CONTAINER": "LAUNCH_CONTAINER", "WAIT_NESTED_CONTAINER": "WAIT_CONTAINER",
                "KILL_NESTED_CONTAINER": "KILL_CONTAINER", "REMOVE_NESTED_CONTAINER": "REMOVE_CONTAINER"}


class AgentOperatorEndpoint:
    """The read-only agent operator API of one agent."""

    def __init__(self, core: AgentCore, http: AgentHTTP, standalone: StandaloneContainers | None = None,
                 nested: NestedContainers | None = None) -> None:
        self.core = core
        self.standalone = standalone   # None (both): a simulated agent
        self.nested = nested
        self.handlers: dict[str, Callable[[JsonDict], JsonDict]] = {
            "GET_HEALTH": lambda _: {"healthy": True},
            "GET_FLAGS": lambda _: {"flags": [{"name": k, "value": v} for k, v in http.flags.items()]},
            "GET_VERSION": lambda _: {"version_info": dict(build_info())},
            "GET_METRICS": lambda _: {"metrics": [{"name": k, "value": v}
                                                  for k, v in http.metrics_snapshot().items()]},
            "GET_LOGGING_LEVEL": lambda _: {"level": logging_level.logging_level()},
            "GET_STATE": lambda _: agent_views.get_state(core),
            "GET_CONTAINERS": self._get_containers,
            "GET_FRAMEWORKS": lambda _: agent_views.get_frameworks(core),
            "GET_EXECUTORS": lambda _: agent_views.get_executors(core),
            "GET_TASKS": lambda _: agent_views.get_tasks(core),
            "GET_AGENT": lambda _: agent_views.get_agent(core),
            "GET_OPERATIONS": lambda _: {"operations": core.operations} if core.operations else {},
            "GET_RESOURCE_PROVIDERS": lambda _: {},
            "LIST_FILES": self._list_files,
            "READ_FILE": self._read_file,
        }
        self.http = http
        # Answered 200 with nothing done, as a Mesos agent without an image store of its own answers it (the
        # Docker images a task uses are the engine's, which the operator prunes with `docker image prune`).
        self.empty_answers = {"PRUNE_IMAGES"}

    async def handle(self, request: web.Request) -> web.Response:
        if request.method != "POST":
            return method_not_allowed(request.method)
        if request.headers.get("Content-Type") == RECORDIO:   # only ATTACH_CONTAINER_INPUT streams its call
            return await attach_input(request, self.nested)
        try:
            call, _ = await read_call(request, AGENT_OPERATOR, validate_agent_operator_call)
            if call["type"] == "LAUNCH_NESTED_CONTAINER_SESSION":   # answered in RecordIO
                if self.nested is None:
                    return text(501, f"LAUNCH_NESTED_CONTAINER_SESSION is not supported by this agent: {SIMULATED}")
                return await launch_session(request, call["launch_nested_container_session"], self.nested)
            if call["type"] == "ATTACH_CONTAINER_OUTPUT":   # answered in RecordIO too
                if self.nested is None:
                    return text(501, f"ATTACH_CONTAINER_OUTPUT is not supported by this agent: {SIMULATED}")
                return await attach_output(request, call["attach_container_output"], self.nested)
            media_type = answer_media_type(request)
        except CallRefused as refused:
            return refused.response
        kind = call["type"]
        if kind in CONTAINER_CALLS or kind in NESTED_CALLS:
            return await self._container_call(kind, call[kind.lower()], media_type)
        if kind in self.empty_answers:
            return web.Response(status=200)
        if kind == "SET_LOGGING_LEVEL":   # answered 200 with no body, as Mesos answers it
            logging_level.apply_call(call["set_logging_level"], asyncio.get_running_loop())
            return web.Response(status=200)
        handler = self.handlers.get(kind)
        if handler is None:
            return text(501, f"{kind} is not supported by this agent: {NOT_HERE}")
        try:
            answer = handler(call.get(kind.lower()) or {})
        except FileRefused as refused:
            return text(refused.status, str(refused))
        body = encode_response(AGENT_OPERATOR, {"type": kind, kind.lower(): answer}, media_type, as_mesos=True)
        return web.Response(status=200, body=body, content_type=media_type)

    def _sandbox_path(self, body: JsonDict) -> str:
        raw = body.get("path") or ""
        real = self.http.confined_path(raw) if raw else None
        if real is None:   # outside the sandboxes or missing: the same answer, nothing revealed
            raise FileRefused(404, f"No file or directory found at path '{raw}'")
        return real

    def _list_files(self, body: JsonDict) -> JsonDict:
        """LIST_FILES: the entries of a sandbox directory, as FileInfo (mtime in nanoseconds, mode a number)."""
        real = self._sandbox_path(body)
        if not os.path.isdir(real):
            raise FileRefused(400, f"Cannot list '{body.get('path')}': not a directory (READ_FILE reads a file)")
        return {"file_infos": [{**info, "mtime": {"nanoseconds": int(info["mtime"] * 1e9)}}
                               for info in self.http.file_infos(real)]}

    def _read_file(self, body: JsonDict) -> JsonDict:
        """READ_FILE: `length` bytes (at most MAX_READ) of a sandbox file from `offset`, and the file's size."""
        real = self._sandbox_path(body)
        if os.path.isdir(real):
            raise FileRefused(400, f"Cannot read '{body.get('path')}': it is a directory (LIST_FILES lists it)")
        offset = int(body.get("offset") or 0)
        length = int(body["length"]) if body.get("length") is not None else MAX_READ
        try:
            size, data = self.http.file_part(real, offset, length)
        except web.HTTPNotFound:   # swapped for a symlink after the check
            raise FileRefused(404, f"No file or directory found at path '{body.get('path')}'") from None
        return {"size": size, "data": base64.b64encode(data).decode()}

    def _get_containers(self, body: JsonDict) -> JsonDict:
        out = agent_views.get_containers(self.core)
        if body.get("show_standalone") and self.standalone is not None:
            out["containers"] += self.standalone.running()
        if body.get("show_nested") and self.nested is not None:
            out["containers"] += self.nested.running()
        return out

    async def _container_call(self, kind: str, body: JsonDict, media_type: str) -> web.Response:
        """A container call: standalone without a parent, nested with one (the older names: nested only)."""
        container_id = body["container_id"]   # checked by validate_agent_operator_call
        if self.standalone is None or self.nested is None:
            return text(501, f"{kind} is not supported by this agent: {SIMULATED}")
        if "parent" in container_id:
            return await self._nested_call(NESTED_CALLS.get(kind, kind), kind, body, media_type)
        if kind in NESTED_CALLS:
            return text(400, CallInvalid("agent", f"Expecting '{kind.lower()}.container_id.parent' to be "
                                                  "present").message)
        try:
            if kind == "LAUNCH_CONTAINER":
                return web.Response(status=await self.standalone.launch(body))
            if kind == "WAIT_CONTAINER":
                return _wait_answer(kind, await self.standalone.wait(body), media_type)
            (self.standalone.kill if kind == "KILL_CONTAINER" else self.standalone.remove)(body)
            return web.Response(status=200)
        except Refused as refused:
            return text(refused.status, str(refused))

    async def _nested_call(self, call: str, kind: str, body: JsonDict, media_type: str) -> web.Response:
        assert self.nested is not None
        container_id = body["container_id"]
        try:
            if call == "LAUNCH_CONTAINER":
                status, _ = await self.nested.launch(body)
                return web.Response(status=status)
            if call == "WAIT_CONTAINER":
                return _wait_answer(kind, {"exit_status": await self.nested.wait(container_id)}, media_type)
            (self.nested.kill if call == "KILL_CONTAINER" else self.nested.remove)(container_id)
            return web.Response(status=200)
        except NestedRefused as refused:
            return text(refused.status, str(refused))


def _wait_answer(kind: str, termination: JsonDict, media_type: str) -> web.Response:
    body = encode_response(AGENT_OPERATOR, {"type": kind, kind.lower(): termination}, media_type, as_mesos=True)
    return web.Response(status=200, body=body, content_type=media_type)
