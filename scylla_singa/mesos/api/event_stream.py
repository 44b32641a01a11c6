"""Outgoing queues of the v1 APIs: a subscriber's RecordIO event stream (scheduler, operator, executor
APIs), and the base of the master's agent links.

`send` never blocks and never fails (the master's single loop calls it for
every event); what is queued is written by the connection's own `pump`
task, many messages per write.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web

from scylla_singa.mesos.api import recordio
from scylla_singa.mesos.api.codec import SCHEDULER, Api, MediaType, encode_event

log = logging.getLogger(__name__)


class QueuedOutbox:
    """An Outbox over a list: `send` never blocks, `close` marks the end; a subclass's `pump` writes what
    `take` hands it, everything sent since its last write at once.

    Why not asyncio.Queue: every message of every task goes through one of
    these, and the master needs no more than a list and one waiter to wake;
    a Queue's put, get and wake-up cost the master about 20 us of each task
    at 50,000 agents (issue 17).
    """

    def __init__(self) -> None:
        self.pending: list[Any] = []   # sent, not yet taken by the pump
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None

    def _frame(self, message: dict[str, Any]) -> Any:
        """What is kept for `message` until the pump takes it."""
        return message

    def send(self, message: dict[str, Any]) -> None:
        if not self.closed:
            self.pending.append(self._frame(message))
            if self._waiter is not None:
                self._wake()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def take(self, limit: int | None = None) -> list[Any] | None:
        """What was sent since the last take (its first `limit` items), waiting until there is some; None once
        the outbox is closed and everything sent before was taken."""
        while not self.pending:
            if self.closed:
                return None
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        if limit is None or len(self.pending) <= limit:
            batch, self.pending = self.pending, []
        else:
            batch = self.pending[:limit]
            del self.pending[:limit]
        return batch


class EventStream(QueuedOutbox):
    """A subscriber's event stream (scheduler or operator API): RecordIO frames in the subscribed format.

    `send` encodes at once (the event dicts may change later) and never
    blocks; `pump` writes what is queued in one chunk per wake-up. An event
    that cannot be encoded (a master bug) is logged and left out rather than
    ending the stream.
    """

    def __init__(self, resp: web.StreamResponse, api: Api = SCHEDULER,
                 media_type: MediaType = MediaType.JSON, as_mesos: bool = False) -> None:
        super().__init__()
        self.resp = resp
        self.api = api
        self.media_type = media_type
        self.as_mesos = as_mesos   # JSON with Mesos's defaults (the operator API); costlier
        # what was sent, for the subscriber's metrics: events/<type>, offers/sent, offers/rescinded
        self.counts: dict[str, float] = {}

    def _count(self, message: dict[str, Any]) -> None:
        kind = str(message.get("type", "")).lower()
        counts = self.counts
        counts[f"events/{kind}"] = counts.get(f"events/{kind}", 0) + 1
        if kind == "offers":
            counts["offers/sent"] = counts.get("offers/sent", 0) + len(message["offers"].get("offers") or ())
        elif kind == "rescind":
            counts["offers/rescinded"] = counts.get("offers/rescinded", 0) + 1

    def _frame(self, message: dict[str, Any]) -> bytes:
        self._count(message)
        try:
            return recordio.encode(encode_event(self.api, message, self.media_type, as_mesos=self.as_mesos))
        except (ValueError, TypeError) as exc:
            log.error("cannot encode %s event %s: %s", self.api.name, message.get("type"), exc)
            return b""

    async def pump(self) -> None:
        # What is pending goes in one chunk, joined once: appending frame by frame copied the growing
        # chunk each time, quadratic in a backlog, so a master that fell behind fell further (issue 17).
        while (frames := await self.take()) is not None:
            await self.resp.write(b"".join(frames) if len(frames) > 1 else frames[0])

    async def serve(self) -> None:
        """Write events until the stream is closed here or the subscriber goes away, then end the
        response; marks the stream closed either way (the caller then forgets the subscriber)."""
        try:
            await self.pump()
            await self.resp.write_eof()
        except (ConnectionError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            self.closed = True
