"""A deadline on reading each request's head (request line and headers), for aiohttp servers.

Why: aiohttp has no header read timeout. Its `keepalive_timeout` does close
a connection whose request head is incomplete, but only once the connection
has been idle that long (3630 s by default), and lowering it also closes
idle keep-alive connections between calls, which pymesos reuses without
retrying: its next call would fail with RemoteDisconnected. So a client
that opens connections and sends half a request head (slowloris) held them
for an hour (the audit of issue 14 held 400). This guard closes a
connection whose head has begun, or which was opened, and has not ended
within `timeout` seconds; a connection idle between requests is left alone.

How: `HeadClock` is a sans-I/O tracker of HTTP/1.1 framing from the bytes a
connection receives: it knows when a head starts and ends, skips bodies by
Content-Length, and stops watching a connection once it switches protocol
(Upgrade, the agents' WebSocket link) or sends a chunked body (whose end it
does not track: the body read has its own deadline, http_answers.py).
`HeadDeadlineProtocol` wraps aiohttp's protocol with it, and
`HeaderDeadlineSite` is a TCPSite whose connections get the wrapper.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

# A head longer than this is not a head aiohttp would take (its limits are 8 KB a line): the clock
# keeps no more of an unfinished head than this, and aiohttp refuses the request itself.
MAX_HEAD_BYTES = 64 * 1024


class HeadClock:
    """Where a connection's byte stream is: between requests, inside a head, inside a body, or unwatched.

    `feed(data)` returns True when a head is in progress after the bytes (a deadline should run),
    False when none is (between requests, in a body, or the connection is no longer watched).
    """

    def __init__(self) -> None:
        self.head = bytearray()     # the unfinished head's bytes so far
        self.in_head = True         # a new connection owes a head at once
        self.body_left = 0          # body bytes still to skip
        self.watching = True

    def feed(self, data: bytes) -> bool:
        view = memoryview(data)
        while self.watching and len(view):
            if self.body_left:
                skip = min(self.body_left, len(view))
                self.body_left -= skip
                view = view[skip:]
                continue
            self.in_head = True
            before = len(self.head)
            self.head += view[:MAX_HEAD_BYTES]
            end = self.head.find(b"\r\n\r\n", max(0, before - 3))
            if end < 0:
                if len(self.head) >= MAX_HEAD_BYTES:
                    self.watching = False   # aiohttp answers 400 to it
                return self.watching
            self._head_ended(bytes(self.head[:end]))
            view = view[end + 4 - before:]
        if not self.watching:
            return False
        return self.in_head and bool(self.head)

    def _head_ended(self, head: bytes) -> None:
        self.head.clear()
        self.in_head = False
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip().lower()
        if b"upgrade" in fields or b"transfer-encoding" in fields:
            self.watching = False
            return
        try:
            self.body_left = max(0, int(fields.get(b"content-length", b"0")))
        except ValueError:
            self.watching = False   # aiohttp refuses the request itself


class HeadDeadlineProtocol(asyncio.Protocol):
    """aiohttp's protocol for one connection, closed when a head is not read within `timeout` seconds."""

    def __init__(self, inner: Any, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.clock = HeadClock()
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.inner.connection_made(transport)
        self._arm()   # a client that connects and sends nothing is also cut off

    def data_received(self, data: bytes) -> None:
        if self.clock.watching:
            if self.clock.feed(data):
                if self.timer is None:
                    self._arm()
            else:
                self._disarm()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def _arm(self) -> None:
        self.timer = asyncio.get_running_loop().call_later(self.timeout, self._expired)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expired(self) -> None:
        self.timer = None
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class HeaderDeadlineSite(web.TCPSite):
    """A TCPSite whose connections must send each request head within `header_read_timeout` seconds.

    Its start() is TCPSite's with the protocol factory wrapped (aiohttp offers no hook for it).
    """

    def __init__(self, runner: web.BaseRunner, host: str, port: int, *, header_read_timeout: float,
                 **kwargs: Any) -> None:
        super().__init__(runner, host, port, **kwargs)
        self.header_read_timeout = header_read_timeout

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        timeout = self.header_read_timeout

        def protocol() -> HeadDeadlineProtocol:
            return HeadDeadlineProtocol(server(), timeout)
        self._server = await asyncio.get_running_loop().create_server(
            protocol, self._host, self._port, ssl=self._ssl_context, backlog=self._backlog,
            reuse_address=self._reuse_address, reuse_port=self._reuse_port)
