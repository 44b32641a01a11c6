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
from collections.abc import Callable
from typing import Any

from aiohttp import web

from .quick_lane import Answerer, QuickLane

# A head longer than this is not a head aiohttp would take (its limits are 8 KB a line): the clock
# keeps no more of an unfinished head than this, and aiohttp refuses the request itself.
MAX_HEAD_BYTES = 64 * 1024
# How long the quick lane waits for the rest of a body before aiohttp takes the connection (and times
# the body with its own deadline, http_answers.BODY_READ_TIMEOUT).
LANE_BODY_PATIENCE_S = 0.5
# aiohttp's default keep-alive timeout: a connection the quick lane holds is closed after as long idle.
AIOHTTP_KEEPALIVE_S = 3630.0


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
    """aiohttp's protocol for one connection, closed when a head is not read within `timeout` seconds.

    With a `lane` (quick_lane.py), the connection starts in it: the lane answers
    what it can, and aiohttp's protocol is made (`make_inner`) only when the
    lane hands the connection over. While in the lane, the head deadline runs
    whenever part of a head is held; a body that has not all come within
    LANE_BODY_PATIENCE_S sends the connection to aiohttp, whose body deadline
    then applies; and a connection idle for `idle_timeout` seconds is closed,
    as aiohttp closes an idle keep-alive connection.
    """

    def __init__(self, make_inner: Callable[[], Any], timeout: float, lane: QuickLane | None = None,
                 idle_timeout: float = AIOHTTP_KEEPALIVE_S,
                 on_closed: Callable[[HeadDeadlineProtocol], None] | None = None) -> None:
        self.make_inner = make_inner
        self.inner: Any = None if lane is not None else make_inner()
        self.timeout = timeout
        self.lane = lane
        self.idle_timeout = idle_timeout
        self.on_closed = on_closed
        self.clock = HeadClock()
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.Handle | None = None   # the deadline, or its confirmation after a poll
        self.timer_kind: str | None = None   # in the lane: what `timer` times ("head" or "body")
        self.timer_request = 0               # ... and of which request (the lane's count of answers then)
        self.idle_timer: asyncio.TimerHandle | None = None
        self.last_active = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self.inner is not None:
            self.inner.connection_made(transport)
        else:
            self._idle_check()
            self.timer_kind = "head"
        self._arm()   # a client that connects and sends nothing is also cut off

    def data_received(self, data: bytes) -> None:
        if self.lane is not None:
            answers, rest = self.lane.feed(data)
            if answers and self.transport is not None:
                self.transport.write(answers)
            if rest is None:
                self.last_active = asyncio.get_running_loop().time()
                self._lane_timer()
                return
            self._hand_over()
            data = rest
        self._to_inner(data)

    def _lane_timer(self) -> None:
        """While the lane holds part of a request: the head deadline for a head, a short patience for a
        body (then aiohttp takes it). Each runs from when that part of that request began: more bytes of
        it do not restart it, the next request's part starts its own (pipelined calls written in big
        writes end most reads inside some body, each of which comes at once)."""
        lane = self.lane
        assert lane is not None
        kind = None if not lane.pending else "body" if lane.waiting_for_body else "head"
        if kind == self.timer_kind and (kind is None or lane.answered == self.timer_request):
            return
        self._disarm()
        self.timer_kind = kind
        self.timer_request = lane.answered
        if kind == "head":
            self._arm()
        elif kind == "body":
            # a body split over packets comes at once; one that trickles is aiohttp's to time
            self.timer = asyncio.get_running_loop().call_later(LANE_BODY_PATIENCE_S, self._after_a_poll,
                                                               self._leave_lane)

    def _after_a_poll(self, then: Callable[[], None]) -> None:
        """A deadline passed: `then` runs two loop turns later, once the loop has read its sockets.

        Why: uvloop runs due timers before it polls. After the loop was busy
        past a deadline (a full collection, a long allocation round), bytes
        that came in time are still unread when the timer fires, and the
        client would be judged slow for the master's pause. The first turn
        can still precede the poll; the second cannot. If the awaited bytes
        come meanwhile, the timer is disarmed as always and `then` never runs.
        """
        self.timer = asyncio.get_running_loop().call_soon(self._second_turn, then)

    def _second_turn(self, then: Callable[[], None]) -> None:
        self.timer = asyncio.get_running_loop().call_soon(then)

    def _to_inner(self, data: bytes) -> None:
        """Bytes for aiohttp, through the head clock."""
        if self.clock.watching:
            if self.clock.feed(data):
                if self.timer is None:
                    self._arm()
            else:
                self._disarm()
        self.inner.data_received(data)

    def _leave_lane(self) -> None:
        """The rest of a body did not come at once: aiohttp reads it, under its own body deadline."""
        self.timer = None
        self.timer_kind = None
        if self.lane is not None and self.transport is not None and not self.transport.is_closing():
            held = self.lane.hand_over()
            self._hand_over()
            self._to_inner(held)

    def _hand_over(self) -> None:
        """From here on aiohttp serves the connection (from the first byte the lane did not answer)."""
        self.lane = None
        self._disarm()   # the head clock decides from here
        self.timer_kind = None
        if self.idle_timer is not None:
            self.idle_timer.cancel()
            self.idle_timer = None
        self.inner = self.make_inner()
        self.inner.connection_made(self.transport)
        if self.on_closed is not None:
            self.on_closed(self)   # aiohttp tracks it now

    def _idle_check(self) -> None:
        loop = asyncio.get_running_loop()
        due = self.last_active + self.idle_timeout if self.last_active else loop.time() + self.idle_timeout
        if self.last_active and loop.time() >= due and self.transport is not None:
            self.idle_timer = None
            self.transport.close()
            return
        self.idle_timer = loop.call_at(due, self._idle_check)

    def eof_received(self) -> bool | None:
        if self.inner is None:
            return None   # the transport closes itself
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self.idle_timer is not None:
            self.idle_timer.cancel()
            self.idle_timer = None
        if self.inner is not None:
            self.inner.connection_lost(exc)
        elif self.on_closed is not None:
            self.on_closed(self)

    def close(self) -> None:
        """Close a connection the lane still holds (the server stops; aiohttp closes its own)."""
        if self.inner is None and self.transport is not None:
            self.transport.close()

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def _arm(self) -> None:
        self.timer = asyncio.get_running_loop().call_later(self.timeout, self._after_a_poll, self._expired)

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

    Its start() is TCPSite's with the protocol factory wrapped (aiohttp offers no hook for it). With
    `lane_answerer` and `lane_paths`, each connection starts in a quick lane (quick_lane.py); stop()
    closes the connections still in it (aiohttp closes the ones it serves).
    """

    def __init__(self, runner: web.BaseRunner, host: str, port: int, *, header_read_timeout: float,
                 lane_answerer: Answerer | None = None, lane_paths: frozenset[str] = frozenset(),
                 idle_timeout: float = AIOHTTP_KEEPALIVE_S, **kwargs: Any) -> None:
        super().__init__(runner, host, port, **kwargs)
        self.header_read_timeout = header_read_timeout
        self.lane_answerer = lane_answerer
        self.lane_paths = lane_paths
        self.idle_timeout = idle_timeout
        self.in_lane: set[HeadDeadlineProtocol] = set()

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        timeout = self.header_read_timeout
        answerer, paths, in_lane, idle = self.lane_answerer, self.lane_paths, self.in_lane, self.idle_timeout

        def protocol() -> HeadDeadlineProtocol:
            if answerer is None:
                return HeadDeadlineProtocol(server, timeout)
            conn = HeadDeadlineProtocol(server, timeout, QuickLane(answerer, paths),
                                        idle_timeout=idle, on_closed=in_lane.discard)
            in_lane.add(conn)
            return conn
        self._server = await asyncio.get_running_loop().create_server(
            protocol, self._host, self._port, ssl=self._ssl_context, backlog=self._backlog,
            reuse_address=self._reuse_address, reuse_port=self._reuse_port)

    async def stop(self) -> None:
        for conn in list(self.in_lane):
            conn.close()
        self.in_lane.clear()
        await super().stop()
