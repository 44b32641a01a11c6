"""QuickLane, sans-I/O: which requests it answers, where it hands a connection over, and that the way
bytes arrive never changes what it answers."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
import uvloop
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api.header_deadline import LANE_BODY_PATIENCE_S, HeadDeadlineProtocol
from scylla_singa.mesos.api.quick_lane import MAX_LANE_BODY, AnswerWriter, QuickLane, RequestHead, parse_head

PATHS = frozenset({"/api/v1/scheduler"})


def call(body: bytes = b'{"type":"REVIVE"}', head: bytes | None = None) -> bytes:
    head = head if head is not None else (b"POST /api/v1/scheduler HTTP/1.1\r\nHost: m\r\n"
                                          b"Content-Type: application/json\r\nContent-Length: %d" % len(body))
    return head + b"\r\n\r\n" + body


class Echo:
    """An answerer that answers each body back (or declines bodies starting with `decline`)."""

    def __init__(self) -> None:
        self.seen: list[tuple[RequestHead, bytes]] = []

    def __call__(self, head: RequestHead, body: bytes) -> bytes | None:
        if body.startswith(b"decline"):
            return None
        self.seen.append((head, body))
        return b"<" + body + b">"


def test_a_simple_call_is_answered_with_its_head_parsed() -> None:
    echo = Echo()
    lane = QuickLane(echo, PATHS)
    assert lane.feed(call()) == (b'<{"type":"REVIVE"}>', None)
    head, body = echo.seen[0]
    assert (head.method, head.path, head.header("content-type"), head.header("host")) == (
        "POST", "/api/v1/scheduler", "application/json", "m")
    assert lane.answered == 1 and not lane.pending


def test_pipelined_calls_are_answered_in_one_write_in_order() -> None:
    lane = QuickLane(Echo(), PATHS)
    answers, rest = lane.feed(call(b"a") + call(b"b") + call(b"c"))
    assert (answers, rest) == (b"<a><b><c>", None)


HANDED_OVER = {
    "GET": b"GET /api/v1/scheduler HTTP/1.1\r\nContent-Length: 1",
    "another path": b"POST /api/v1 HTTP/1.1\r\nContent-Length: 1",
    "a query": b"POST /api/v1/scheduler?x=1 HTTP/1.1\r\nContent-Length: 1",
    "HTTP/1.0": b"POST /api/v1/scheduler HTTP/1.0\r\nContent-Length: 1",
    "no Content-Length": b"POST /api/v1/scheduler HTTP/1.1\r\nHost: m",
    "chunked": b"POST /api/v1/scheduler HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1",
    "Expect": b"POST /api/v1/scheduler HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1",
    "Connection": b"POST /api/v1/scheduler HTTP/1.1\r\nConnection: close\r\nContent-Length: 1",
    "Upgrade": b"POST /api/v1/scheduler HTTP/1.1\r\nUpgrade: websocket\r\nContent-Length: 1",
    "a header twice": b"POST /api/v1/scheduler HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 1",
    "a signed length": b"POST /api/v1/scheduler HTTP/1.1\r\nContent-Length: +1",
    "a body over the lane's cap": b"POST /api/v1/scheduler HTTP/1.1\r\nContent-Length: %d" % (MAX_LANE_BODY + 1),
    "a folded line": b"POST /api/v1/scheduler HTTP/1.1\r\nContent-Length: 1\r\n x",
    "a space before the colon": b"POST /api/v1/scheduler HTTP/1.1\r\nContent-Length : 1",
    "a line without a colon": b"POST /api/v1/scheduler HTTP/1.1\r\nContent-Length: 1\r\nnonsense",
    "a control byte": b"POST /api/v1/scheduler HTTP/1.1\r\nX: a\x00b\r\nContent-Length: 1",
    "non-ASCII": b"POST /api/v1/scheduler HTTP/1.1\r\nX: \xc3\xa9\r\nContent-Length: 1",
    "a lone LF in a value": b"POST /api/v1/scheduler HTTP/1.1\r\nX: a\nb: c\r\nContent-Length: 1",
    "a lone CR in a value": b"POST /api/v1/scheduler HTTP/1.1\r\nX: a\rb\r\nContent-Length: 1",
    "a GET": b"GET /api/v1/scheduler HTTP/1.1\r\nContent-Length: 1",
    "HTTP/1.0": b"POST /api/v1/scheduler HTTP/1.0\r\nContent-Length: 1",
    "an extra space in the request line": b"POST  /api/v1/scheduler HTTP/1.1\r\nContent-Length: 1",
}


@pytest.mark.parametrize("head", HANDED_OVER.values(), ids=HANDED_OVER.keys())
def test_a_request_the_lane_does_not_take_hands_the_connection_over_at_its_first_byte(head: bytes) -> None:
    lane = QuickLane(Echo(), PATHS)
    odd = call(b"x", head)
    answers, rest = lane.feed(call(b"a") + odd + call(b"b"))
    assert answers == b"<a>"                    # what came before is still answered, once
    assert rest == odd + call(b"b")             # everything from the odd request on is the full server's
    assert lane.handed_over and lane.feed(b"later") == (b"", b"later")


def test_a_declined_call_hands_over_with_its_whole_request() -> None:
    lane = QuickLane(Echo(), PATHS)
    assert lane.feed(call(b"a") + call(b"decline me")) == (b"<a>", call(b"decline me"))


def test_a_head_longer_than_the_lane_looks_at_is_handed_over_unfinished() -> None:
    lane = QuickLane(Echo(), PATHS)
    endless = b"POST /api/v1/scheduler HTTP/1.1\r\nX: " + b"a" * 20000
    assert lane.feed(endless) == (b"", endless)


def test_waiting_states_say_whether_a_head_or_a_body_is_unfinished() -> None:
    lane = QuickLane(Echo(), PATHS)
    whole = call(b"0123456789")
    assert lane.feed(whole[:10]) == (b"", None)
    assert lane.pending and not lane.waiting_for_body
    assert lane.feed(whole[10:-3]) == (b"", None)
    assert lane.pending and lane.waiting_for_body
    assert lane.feed(whole[-3:]) == (b"<0123456789>", None)
    assert not lane.pending and not lane.waiting_for_body
    lane.feed(whole[:-1])
    assert lane.hand_over() == whole[:-1] and lane.handed_over


@settings(max_examples=200, deadline=None)
@given(bodies=st.lists(st.binary(max_size=40), min_size=1, max_size=6), cuts=st.lists(st.integers(0, 400)))
def test_however_the_bytes_arrive_the_answers_are_the_same(bodies: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(call(b"b" + body) for body in bodies)   # "b": never a declined body
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    lane = QuickLane(Echo(), PATHS)
    answers = b""
    for start, end in zip(points, points[1:]):
        got, rest = lane.feed(stream[start:end])
        assert rest is None
        answers += got
    assert answers == b"".join(b"<b" + body + b">" for body in bodies)
    assert not lane.pending


def test_parse_head_gives_the_body_length_and_lower_case_names() -> None:
    parsed = parse_head(b"POST /api/v1/scheduler HTTP/1.1\r\nMesos-Stream-Id: s-1\r\nContent-Length: 7", PATHS)
    assert parsed is not None
    head, length = parsed
    assert length == 7 and head.header("mesos-stream-id") == "s-1" and head.header("authorization") is None


def test_answers_are_framed_as_aiohttp_frames_them() -> None:
    """The full comparison with aiohttp's bytes is tests/mesos/test_quick_lane.py; here, the framing."""
    writer = AnswerWriter()
    empty = writer.empty(202)
    assert empty.startswith(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nDate: ") and empty.endswith(b"\r\n\r\n")
    text = writer.text(400, "Framework cannot be found \u2713")
    head, _, body = text.partition(b"\r\n\r\n")
    assert body == "Framework cannot be found \u2713".encode()
    assert b"Content-Length: %d" % len(body) in head and head.startswith(b"HTTP/1.1 400 Bad Request\r\n")


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = asyncio.get_running_loop().create_future()

    def write(self, data: bytes) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closed.done()

    def close(self) -> None:
        if not self.closed.done():
            self.closed.set_result(True)


def test_a_lane_connection_idle_for_the_keep_alive_time_is_closed_and_a_busy_one_is_not() -> None:
    """The lane keeps aiohttp's keep-alive rule: idle that long, the connection is closed (never made inner)."""
    async def scenario() -> None:
        made: list[object] = []
        transport = FakeTransport()
        conn = HeadDeadlineProtocol(lambda: made.append(1), 5.0, QuickLane(Echo(), PATHS), idle_timeout=0.3)
        conn.connection_made(transport)
        for _ in range(4):   # busy for longer than the idle time
            conn.data_received(call(b"a"))
            await asyncio.sleep(0.1)
        assert not transport.is_closing() and transport.written == b"<a>" * 4
        await asyncio.wait_for(transport.closed, 2.0)
        conn.connection_lost(None)
        assert made == []   # aiohttp's protocol was never needed
    asyncio.run(scenario())


class FakeInner:
    """aiohttp's protocol as the wrapper sees it: what it was given, in order."""

    def __init__(self) -> None:
        self.made = False
        self.received = b""

    def connection_made(self, transport: object) -> None:
        self.made = True

    def data_received(self, data: bytes) -> None:
        self.received += data

    def connection_lost(self, exc: Exception | None) -> None:
        pass


def test_a_head_trickled_into_the_lane_is_cut_at_the_deadline_from_its_start() -> None:
    """The slowloris: a byte every 0.1 s would keep a deadline that restarts on each byte from ever firing."""
    async def scenario() -> None:
        transport = FakeTransport()
        conn = HeadDeadlineProtocol(FakeInner, 0.3, QuickLane(Echo(), PATHS))
        conn.connection_made(transport)
        for byte in call(b"a")[:-10]:
            if transport.is_closing():
                break
            conn.data_received(bytes([byte]))
            await asyncio.sleep(0.1)
        assert transport.is_closing(), "the trickled head outlived the head deadline"
        conn.connection_lost(None)
    asyncio.run(scenario())


def test_a_trickled_body_goes_to_aiohttp_with_the_head_clock_in_step() -> None:
    """After the lane's patience, aiohttp gets the held bytes and the rest in order; the head clock then
    counts the body's rest as body, so it runs no head deadline while aiohttp reads it."""
    async def scenario() -> None:
        transport = FakeTransport()
        inner = FakeInner()
        conn = HeadDeadlineProtocol(lambda: inner, 0.3, QuickLane(Echo(), PATHS))
        conn.connection_made(transport)
        whole = call(b"0123456789")
        conn.data_received(whole[:-6])
        async with asyncio.timeout(5):
            while not inner.made:
                await asyncio.sleep(0.05)
        assert inner.received == whole[:-6]
        conn.data_received(whole[-6:-3])
        conn.data_received(whole[-3:])
        assert inner.received == whole and conn.timer is None   # no head in progress
        await asyncio.sleep(0.5)   # longer than the head deadline: nothing cuts a connection between requests
        assert not transport.is_closing()
        conn.connection_lost(None)
    asyncio.run(scenario())


def test_pipelined_bodies_cut_by_every_read_each_get_the_whole_patience() -> None:
    """Calls written in big writes end most reads inside some body. Each body that comes at once is
    answered in the lane, however long the stream goes on: the patience is per request, not per stream."""
    async def scenario() -> None:
        transport = FakeTransport()
        inner = FakeInner()
        conn = HeadDeadlineProtocol(lambda: inner, 5.0, QuickLane(Echo(), PATHS))
        conn.connection_made(transport)
        requests = [call(b"%04d" % i) for i in range(12)]
        # read i: the last 2 bytes of request i-1 and all of request i but its last 2 bytes
        reads = [(requests[i - 1][-2:] if i else b"") + requests[i][:-2] for i in range(12)]
        loop = asyncio.get_running_loop()
        started = loop.time()
        for data in reads:
            conn.data_received(data)
            assert conn.lane is None or conn.lane.waiting_for_body
            await asyncio.sleep(0.15)          # 12 reads: 1.8 s in all, over three times the patience
        conn.data_received(requests[-1][-2:])
        assert loop.time() - started > 3 * LANE_BODY_PATIENCE_S
        assert not inner.made, "a connection whose bodies each came at once was handed to aiohttp"
        assert transport.written == b"".join(b"<%04d>" % i for i in range(12))
        conn.connection_lost(None)
    asyncio.run(scenario())


@pytest.mark.parametrize("loop_kind", ["uvloop", "asyncio"])
def test_a_body_that_came_while_the_loop_was_busy_past_the_patience_is_answered_in_the_lane(loop_kind) -> None:
    """uvloop runs due timers before it reads sockets: after a pause of the loop longer than the
    patience (a full collection, a long allocation round), the rest of a body that came in time must
    still be read before the lane gives up on it."""
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        inner = FakeInner()
        conns: list[HeadDeadlineProtocol] = []

        def protocol() -> HeadDeadlineProtocol:
            conns.append(HeadDeadlineProtocol(lambda: inner, 5.0, QuickLane(Echo(), PATHS)))
            return conns[-1]
        server = await loop.create_server(protocol, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        whole = call(b"0123456789")
        writer.write(whole[:-5])
        async with asyncio.timeout(5):
            while not (conns and conns[0].lane is not None and conns[0].lane.waiting_for_body):
                await asyncio.sleep(0.01)

        # The pause comes in an I/O callback, as the master's work does (an agent link's batch, a call):
        # uvloop's next turn then starts with the timers, before it reads sockets again.
        bell, ring = socket.socketpair()

        def busy_loop() -> None:
            loop.remove_reader(bell)
            writer.transport.write(whole[-5:])   # the rest is sent now, and waits in the socket
            time.sleep(2 * LANE_BODY_PATIENCE_S)  # the loop is busy past the patience
        loop.add_reader(bell, busy_loop)
        ring.send(b"!")
        async with asyncio.timeout(5):
            assert await reader.readexactly(12) == b"<0123456789>"
        assert not inner.made
        bell.close()
        ring.close()
        writer.close()
        server.close()
        await server.wait_closed()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop if loop_kind == "uvloop" else None) as runner:
        runner.run(scenario())


def test_a_head_seen_before_on_the_connection_is_not_parsed_again(monkeypatch) -> None:
    from scylla_singa.mesos.api import quick_lane
    parsed: list[bytes] = []
    real = quick_lane.parse_head

    def counting(head: bytes, paths: frozenset[str]):
        parsed.append(head)
        return real(head, paths)
    monkeypatch.setattr(quick_lane, "parse_head", counting)
    echo = Echo()
    lane = QuickLane(echo, PATHS)
    assert lane.feed(call(b"aa") + call(b"bb") + call(b"ccc")) == (b"<aa><bb><ccc>", None)
    assert len(parsed) == 2                        # two distinct heads (Content-Length 2 and 3)
    assert echo.seen[0][0] is echo.seen[1][0]      # one shared, read-only head
    with pytest.raises(TypeError):
        echo.seen[0][0].headers["x"] = "y"         # type: ignore[index]
    for n in range(quick_lane.MAX_KNOWN_HEADS + 10):   # many distinct heads: the memory stays bounded
        lane.feed(call(b"x" * n))
    assert len(lane._known_heads) <= quick_lane.MAX_KNOWN_HEADS
