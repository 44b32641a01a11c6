"""The HTTP answers every Mesos v1 endpoint of the master and the agent gives the same way.

Measured on Mesos 1.12 (tests/fixtures/apache_mesos/errors/): errors are
`text/plain; charset=utf-8`; a wrong method is 405 with `Allow` and a
sentence naming both methods; a call that is accepted but answers nothing is
202 with an empty body (`Content-Length: 0`, which pymesos needs). Request
bodies of the v1 APIs are read here, capped, and decoded by the codec, so a
handler receives a validated dict or never runs. A body larger than
MAX_BODY is refused by aiohttp with 413 before it is read whole.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from .call_validation import CallInvalid
from .codec import Api, CodecError, JsonDict, MediaType, decode_call, request_media_type, response_media_type

# The largest call body the v1 APIs take (aiohttp answers 413 beyond it: the apps' client_max_size).
MAX_BODY = 16 * 1024 * 1024
# Seconds a client has to send a call's whole body once its headers are in (a client that announces a
# body and trickles it would otherwise hold the connection and a handler for as long as it likes;
# the head has its own deadline, header_deadline.py). 16 MB at 1 MB/s fits.
BODY_READ_TIMEOUT = 20.0


def text(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, text=message, headers=headers)


def json_answer(data: Any, status: int = 200) -> web.Response:
    """JSON with the Content-Type Mesos writes: exactly `application/json` (no charset)."""
    return web.Response(status=status, body=json.dumps(data, separators=(",", ":")).encode(),
                        headers={"Content-Type": "application/json"})


def accepted() -> web.Response:
    return web.Response(status=202)


def method_not_allowed(method: str, allowed: tuple[str, ...] = ("POST",)) -> web.Response:
    names = ", ".join(f"'{m}'" for m in allowed)
    return text(405, f"405 Method Not Allowed. Expecting one of {{ {names} }}, but received '{method}'.",
                {"Allow": ", ".join(allowed)})


def redirect(location: str) -> web.Response:
    """307 with Mesos's scheme-relative Location; raised nowhere (returned), so middlewares see it."""
    return web.Response(status=307, headers={"Location": location})


@web.middleware
async def mesos_not_found(request: web.Request, handler: Callable[[web.Request], Any]) -> web.StreamResponse:
    """An unknown path answers as libprocess does: 404 with the text "404 Not Found."."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        if request.match_info.http_exception is None:
            raise  # a handler's own 404, with its own body
        return text(404, "404 Not Found.")


class CallRefused(Exception):
    """A request refused before its handler ran: `response` says why (400/415/406/413)."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.text)
        self.response = response


async def read_call(request: web.Request, api: Api, validate: Callable[[JsonDict], Any]
                    ) -> tuple[JsonDict, MediaType]:
    """The request's body as a validated call dict and the body's media type; raises CallRefused."""
    try:
        media_type = request_media_type(request.headers.get("Content-Type"))
    except CodecError as exc:
        raise CallRefused(text(exc.status, exc.message)) from None
    try:
        if request.content.is_eof():   # the whole body came with the head (nearly every call): no clock
            body = await request.read()
        else:
            async with asyncio.timeout(BODY_READ_TIMEOUT):
                body = await request.read()
    except TimeoutError:
        raise CallRefused(text(408, f"Request body not received within {BODY_READ_TIMEOUT:g} seconds")) from None
    try:
        call = decode_call(api, body, media_type)
        validate(call)
    except CodecError as exc:
        raise CallRefused(text(exc.status, exc.message)) from None
    except CallInvalid as exc:
        raise CallRefused(text(400, exc.message)) from None
    return call, media_type


def answer_media_type(request: web.Request) -> MediaType:
    """The media type to answer in, from the request's Accept header; raises CallRefused (406) when
    none of what it accepts is JSON or protobuf."""
    try:
        return response_media_type(request.headers.get("Accept"))
    except CodecError as exc:
        raise CallRefused(text(exc.status, exc.message)) from None
