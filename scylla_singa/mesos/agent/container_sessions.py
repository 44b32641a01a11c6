"""The streaming calls of `mesos task exec` and `task attach`: LAUNCH_NESTED_CONTAINER_SESSION,
ATTACH_CONTAINER_INPUT and ATTACH_CONTAINER_OUTPUT.

All speak RecordIO: a session's answer is `Content-Type: application/recordio`
whose records are ProcessIO messages (its command's stdout and stderr, as
they come) in the media type of `Message-Accept` (JSON unless protobuf is
asked for), until the command ends. ATTACH_CONTAINER_INPUT's request is a
RecordIO stream of agent Calls (`Message-Content-Type`): the first names
the container (type CONTAINER_ID: a session's, or a task's on a terminal;
container_input.py), the next carry its stdin (PROCESS_IO DATA; empty
data is the end of input) or controls (heartbeats; a terminal is resized
by TTY_INFO). ATTACH_CONTAINER_OUTPUT
answers like a session: a running task's or standalone container's
output from the call on (container_output.py), or a running session's
(its own answer streams it too). The HTTP side only: the
containers themselves are nested_containers.py's, their terminals
terminal.py's.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from scylla_singa.mesos.api import codec, compact_json, recordio
from scylla_singa.mesos.api.call_validation import CallInvalid, validate_agent_operator_call
from scylla_singa.mesos.api.codec import AGENT_OPERATOR, CodecError, MediaType
from scylla_singa.mesos.api.http_answers import text
from scylla_singa.mesos.api.proto import agent_pb2
from .container_input import InputStream, close_input, open_input
from .container_output import follow_output
from .nested_containers import (NestedContainers, NestedRefused, ProcessIO, followed_records, full_name,
                                session_records)
from .terminal import control_window_size

RECORDIO = "application/recordio"


def message_media_type(header: str | None) -> MediaType:
    """JSON unless the header asks for protobuf only (Mesos's Message-Accept / Message-Content-Type)."""
    if header and codec.accepts(header, MediaType.PROTOBUF) and not codec.accepts(header, MediaType.JSON):
        return MediaType.PROTOBUF
    return MediaType.JSON


async def launch_session(request: web.Request, body: dict[str, Any], nested: NestedContainers
                         ) -> web.StreamResponse:
    """LAUNCH_NESTED_CONTAINER_SESSION: launch, then stream its output; the caller hanging up kills it."""
    if not codec.accepts(request.headers.get("Accept"), RECORDIO):
        return text(406, f"Expecting 'Accept' to allow '{RECORDIO}'")
    message_type = message_media_type(request.headers.get("Message-Accept"))
    if "parent" not in body["container_id"]:
        return text(400, "Expecting 'launch_nested_container_session.container_id.parent' to be present")
    try:
        status, container = await nested.launch(body, session=True)
    except NestedRefused as refused:
        return text(refused.status, str(refused))
    if container is None:
        return web.Response(status=status)
    response = web.StreamResponse(status=200, headers={"Content-Type": RECORDIO,
                                                       "Message-Content-Type": message_type.value})
    try:
        await response.prepare(request)
        async for record in session_records(container):
            await response.write(recordio.encode(_encoded(record, message_type)))
        await response.write_eof()
    except (ConnectionResetError, OSError):
        pass
    finally:
        if not container.ended.is_set() and not container.killed:   # hung up: Mesos kills the session
            container.killed = True
            container.kill_now()
    return response


async def attach_output(request: web.Request, body: dict[str, Any], nested: NestedContainers
                        ) -> web.StreamResponse:
    """ATTACH_CONTAINER_OUTPUT of a running task or standalone container: its output from now to its end."""
    if not codec.accepts(request.headers.get("Accept"), RECORDIO):
        return text(406, f"Expecting 'Accept' to allow '{RECORDIO}'")
    message_type = message_media_type(request.headers.get("Message-Accept"))
    container_id = body["container_id"]
    name = full_name(container_id)
    records: AsyncIterator[ProcessIO]
    if "parent" in container_id:
        session = nested.containers.get(name)
        if session is None or session.ended.is_set():
            return text(404, f"Container {name} cannot be found (or has terminated)")
        if session.output is None:
            return text(400, f"Container {name} keeps no output to attach to: only a nested container launched "
                             "by LAUNCH_NESTED_CONTAINER_SESSION does")
        records = followed_records(session)
    else:
        container = nested.find_parent(name)
        if container is None:
            return text(404, f"Container {name} cannot be found (or has terminated)")
        try:
            records = await follow_output(container, nested.docker)
        except Exception as exc:  # noqa: BLE001 - the engine's or the file system's own words, said to the caller
            return text(404, f"Container {name} cannot be attached to (it may have just terminated): {exc}")
    response = web.StreamResponse(status=200, headers={"Content-Type": RECORDIO,
                                                       "Message-Content-Type": message_type.value})
    try:
        await response.prepare(request)
        async for record in records:
            await response.write(recordio.encode(_encoded(record, message_type)))
        await response.write_eof()
    except (ConnectionResetError, OSError):
        pass   # the caller left: stop following
    finally:
        await records.aclose()
    return response


def _encoded(record: dict[str, Any], media_type: MediaType) -> bytes:
    if media_type is MediaType.JSON:
        return compact_json.dumps(record)
    return codec.from_dict(agent_pb2.ProcessIO(), record).SerializeToString()


async def attach_input(request: web.Request, nested: NestedContainers | None) -> web.Response:
    """ATTACH_CONTAINER_INPUT: feed the stream's records to the named container until the stream ends."""
    media_type = message_media_type(request.headers.get("Message-Content-Type"))
    decoder = recordio.Decoder(max_record=16 * 1024 * 1024)
    target: InputStream | None = None
    try:
        async for chunk in request.content.iter_any():
            for record in decoder.feed(chunk):
                call = codec.decode_call(AGENT_OPERATOR, record, media_type)
                validate_agent_operator_call(call)
                attach = call.get("attach_container_input") or {}
                if call["type"] != "ATTACH_CONTAINER_INPUT":
                    return text(400, f"Expecting ATTACH_CONTAINER_INPUT calls in the stream, not {call['type']}")
                if target is None:
                    if attach.get("type") != "CONTAINER_ID" or "container_id" not in attach:
                        return text(400, "The first message of ATTACH_CONTAINER_INPUT must name the container "
                                         "(type CONTAINER_ID)")
                    if nested is None:
                        return text(501, "ATTACH_CONTAINER_INPUT is not supported by this agent: a simulated "
                                         "agent runs no processes")
                    target = await open_input(nested, attach["container_id"])
                    continue
                _feed(target, attach)
    except NestedRefused as refused:
        return text(refused.status, str(refused))
    except (CodecError, recordio.RecordIOError) as exc:
        return text(400, f"Failed to decode the ATTACH_CONTAINER_INPUT stream: {exc}")
    except CallInvalid as exc:
        return text(400, exc.message)
    except ConnectionResetError:   # the caller hung up (a CLI that exits does not end its stream first)
        return web.Response(status=200)
    finally:
        if target is not None and nested is not None:
            close_input(nested, target)
    if target is None:
        return text(400, "The ATTACH_CONTAINER_INPUT stream ended before it named a container")
    return web.Response(status=200)


def _feed(target: InputStream, attach: dict[str, Any]) -> None:
    io = attach.get("process_io") or {}
    if io.get("type") != "DATA":   # CONTROL: a heartbeat, or a terminal's new size
        size = control_window_size(io)
        if size is not None:
            target.resize(size)
        return
    data = io.get("data") or {}
    try:
        chunk = base64.b64decode(data.get("data") or "", validate=True)
    except (binascii.Error, ValueError):
        chunk = b""
    target.stdin(chunk if chunk else None)
