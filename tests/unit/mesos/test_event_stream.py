"""An event stream's writer: what is queued goes out in order, in one write per wake-up, and the stream's end
(close) is written after everything queued before it."""

from __future__ import annotations

import asyncio
import json

from scylla_singa.mesos.api import recordio
from scylla_singa.mesos.api.event_stream import EventStream


class _Response:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    async def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))


def test_queued_frames_go_out_in_order_in_one_write_then_the_end() -> None:
    async def scenario() -> list[bytes]:
        resp = _Response()
        stream = EventStream(resp)   # type: ignore[arg-type] - only write() is used
        for i in range(500):
            stream.send({"type": "HEARTBEAT", "n": i})
        stream.close()
        stream.send({"type": "HEARTBEAT"})   # after the end: dropped
        await asyncio.wait_for(stream.pump(), 5)
        return resp.writes
    writes = asyncio.run(scenario())
    assert len(writes) == 1
    events = [json.loads(record) for record in recordio.Decoder().feed(writes[0])]
    assert [e["n"] for e in events] == list(range(500))
