"""A quick lane for the calls that carry a cluster's load: plain HTTP/1.1 POSTs answered without aiohttp.

Why: every task costs the master four scheduler calls (its ACCEPT and three
ACKNOWLEDGEs), and aiohttp spends more on each (a request object, the
router, the middleware chain, a response object, a task wake-up per
request, one write per answer) than the master spends on the call itself
(issue 17; docs/benchmarks.md, "Where the master's CPU per task goes").
Frameworks send these calls on a kept-alive connection of their own, often
pipelined, so a connection's requests can be answered straight from the
bytes it receives.

How: `QuickLane` is sans-I/O, one per connection. It takes the bytes the
connection receives and answers each request that is simple (request line
`POST <path> HTTP/1.1` on one of its paths, ASCII head, each header once,
`Content-Length` and nothing that changes framing, the whole body already
here) with the answerer's bytes. The first request that is not simple, or
that the answerer declines (returns None: "let the full server answer
this"), hands the connection over: from that request's first byte on, every
byte goes to aiohttp, which serves it as if the lane had never been there.
An answerer declines anything it cannot answer exactly as the full server
would, so the lane changes cost only, never an answer
(tests/mesos/test_quick_lane.py compares the two byte for byte).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from types import MappingProxyType

from aiohttp.http import SERVER_SOFTWARE

# The largest body the lane holds while it waits for the rest of a request; beyond, the full server
# (with its own cap and body deadline) reads it.
MAX_LANE_BODY = 64 * 1024
# The largest head the lane looks at; a longer one is the full server's to refuse.
MAX_LANE_HEAD = 16 * 1024
# A head the lane takes: `POST <target> HTTP/1.1`, then lines `name: value`, names HTTP tokens, values
# visible ASCII, spaces and tabs (so no control byte, no lone CR or LF, no folded line). Any other head is
# the full server's to answer or refuse.
_LANE_HEAD = re.compile(rb"POST ([\x21-\x7e]+) HTTP/1\.1((?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e]*)*)")
# How many parsed heads a connection keeps (then it starts over): a framework's calls take a few dozen.
MAX_KNOWN_HEADS = 256
# Headers that change how a request is framed or answered: the full server handles them.
_FULL_SERVER_HEADERS = frozenset({"transfer-encoding", "upgrade", "expect", "connection"})


@dataclass(frozen=True, slots=True)
class RequestHead:
    """A simple request's head: its method, path (the request target, no query) and headers (lower-case names,
    read-only: a connection's requests with the same head bytes share one)."""

    method: str
    path: str
    headers: Mapping[str, str]

    def header(self, name: str) -> str | None:
        """The value of header `name` (lower-case), or None when absent."""
        return self.headers.get(name)


# An answerer: the whole HTTP/1.1 answer to a simple request, or None when the full server must answer it.
Answerer = Callable[[RequestHead, bytes], bytes | None]


def parse_head(head: bytes, paths: frozenset[str]) -> tuple[RequestHead, int] | None:
    """The head (bytes before the blank line) and its body length, or None when the lane must not take it."""
    if len(head) > MAX_LANE_HEAD:
        return None
    match = _LANE_HEAD.fullmatch(head)
    if match is None:
        return None
    path = match[1].decode()
    if path not in paths:
        return None
    headers: dict[str, str] = {}
    for line in match[2].decode().split("\r\n")[1:]:
        name, _, raw = line.partition(":")
        key = name.lower()
        if key in headers or key in _FULL_SERVER_HEADERS:
            return None
        headers[key] = raw.strip(" \t")
    length = headers.get("content-length")
    if length is None or not length.isdigit() or int(length) > MAX_LANE_BODY:
        return None
    return RequestHead("POST", path, MappingProxyType(headers)), int(length)


class QuickLane:
    """One connection's quick lane (see the module docstring).

    `feed(data)` returns the answers to write (in request order, joined) and,
    once the lane hands the connection over, the bytes the full server must
    receive first (None while the lane still holds the connection).
    `pending` says whether part of a request is held, waiting for the rest, and
    `waiting_for_body` whether that part is a whole head and some of its body.
    """

    def __init__(self, answerer: Answerer, paths: frozenset[str]) -> None:
        self.answerer = answerer
        self.paths = paths
        self.buffer = bytearray()
        self.handed_over = False
        self.answered = 0
        self.waiting_for_body = False   # the held bytes end inside a body (not inside a head)
        # Heads parsed on this connection, by their bytes: a framework's calls differ in body and
        # Content-Length only, so most heads are parsed once (issue 17).
        self._known_heads: dict[bytes, tuple[RequestHead, int]] = {}

    @property
    def pending(self) -> bool:
        return bool(self.buffer)

    def hand_over(self) -> bytes:
        """Give up the connection now; the held bytes are for the full server (e.g. a body that trickles)."""
        return self._hand_over([], 0)[1]

    def feed(self, data: bytes) -> tuple[bytes, bytes | None]:
        if self.handed_over:
            return b"", data
        buf = self.buffer
        buf += data
        answers: list[bytes] = []
        start = 0
        self.waiting_for_body = False
        while start < len(buf):
            end = buf.find(b"\r\n\r\n", start)
            if end < 0:
                if len(buf) - start > MAX_LANE_HEAD:
                    return self._hand_over(answers, start)
                break
            raw_head = bytes(buf[start:end])
            parsed = self._known_heads.get(raw_head)
            if parsed is None:
                parsed = parse_head(raw_head, self.paths)
                if parsed is None:
                    return self._hand_over(answers, start)
                if len(self._known_heads) >= MAX_KNOWN_HEADS:
                    self._known_heads.clear()
                self._known_heads[raw_head] = parsed
            head, length = parsed
            body_start = end + 4
            if len(buf) - body_start < length:
                self.waiting_for_body = True   # the rest is on its way (the caller bounds the wait)
                break
            answer = self.answerer(head, bytes(buf[body_start:body_start + length]))
            if answer is None:
                return self._hand_over(answers, start)
            answers.append(answer)
            self.answered += 1
            start = body_start + length
        del buf[:start]
        return b"".join(answers), None

    def _hand_over(self, answers: list[bytes], start: int) -> tuple[bytes, bytes]:
        rest = bytes(self.buffer[start:])
        self.buffer = bytearray()
        self.handed_over = True
        return b"".join(answers), rest


class AnswerWriter:
    """HTTP/1.1 answers as aiohttp writes them (same status line, headers and order; Date cached per second)."""

    def __init__(self) -> None:
        self._second = -1
        self._date = b""
        self._empty: dict[int, bytes] = {}   # this second's answers with no body, by status (a 202 per ACK)

    def date(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second, self._date = now, formatdate(now, usegmt=True).encode()
            self._empty = {}
        return self._date

    def empty(self, status: int) -> bytes:
        """An answer with no body (aiohttp's `web.Response(status=...)`)."""
        date = self.date()
        answer = self._empty.get(status)
        if answer is None:
            answer = self._empty[status] = b"HTTP/1.1 %d %s\r\nContent-Length: 0\r\nDate: %s\r\nServer: %s\r\n\r\n" % (
                status, _reason(status), date, _SERVER)
        return answer

    def text(self, status: int, message: str) -> bytes:
        """A text answer (aiohttp's `web.Response(status=..., text=...)`)."""
        body = message.encode()
        return (b"HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n"
                b"Date: %s\r\nServer: %s\r\n\r\n%s") % (status, _reason(status), len(body), self.date(), _SERVER,
                                                        body)


_SERVER = SERVER_SOFTWARE.encode()


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""
