"""Many light Mesos frameworks in one asyncio process, speaking the v1 scheduler HTTP API directly.

    python -m bench.scale_frameworks --master HOST:PORT [--count 200] [--min-s 5] [--max-s 55]

The background load of the scalability benchmark (the Mesos paper's 200
frameworks keeping the cluster busy): each framework SUBSCRIBEs (a chunked
RecordIO stream, decoded with scylla_singa.mesos.recordio), takes every
offer whole for one task `sleep D` with D uniform in [min, max] seconds
(mean 30 s by default), and ACKNOWLEDGEs every status update that has a
uuid. pymesos drivers are threads, and an HTTP client library costs a few
hundred microseconds a call; either would make this process, not the
master, the bottleneck. So calls go over one keep-alive connection per
framework as pipelined HTTP/1.1 requests written by hand (`CallPipe`; the
calls of one loop pass, e.g. the ACKs of one batch of updates, in one
write, as a buffered client would), and
the event stream is read with aiohttp. Every 2 s one JSON line of counters
goes to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import random
import signal
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from scylla_singa.mesos.api.recordio import Decoder

PATH = "/api/v1/scheduler"
TERMINAL = frozenset({"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR", "TASK_DROPPED"})
ENDED: set[str] = set()
JSON = "application/json"


@dataclass
class Counters:
    subscribed: int = 0
    offers: int = 0
    launched: int = 0
    with_tasks: int = 0  # frameworks that have launched at least one task
    updates: dict[str, int] = field(default_factory=dict)  # first update of each (task, state)
    duplicates: int = 0  # updates seen again: agents resend until acknowledged, so these mean delay
    acks: int = 0
    call_errors: int = 0
    stream_errors: int = 0
    last_error: str = ""

    def line(self) -> str:
        return json.dumps({"t": time.time(), "subscribed": self.subscribed, "offers": self.offers,
                           "launched": self.launched, "with_tasks": self.with_tasks, "updates": self.updates,
                           "duplicates": self.duplicates, "acks": self.acks, "call_errors": self.call_errors,
                           "stream_errors": self.stream_errors, "last_error": self.last_error})


class CallPipe:
    """Pipelined HTTP/1.1 POSTs to the scheduler endpoint over one connection; answers are counted, not awaited.

    The connection is opened at the first call and again after the master closed it: the master closes a
    connection that stays silent after it opened (its request-head deadline, header_deadline.py), so one
    opened ahead of time would have lost every call written to it later. Calls unanswered when a
    connection ends count as call errors.
    """

    def __init__(self, host: str, port: int, counters: Counters) -> None:
        self.host, self.port, self.c = host, port, counters
        self.kinds: collections.deque[str] = collections.deque()
        self.writer: asyncio.StreamWriter | None = None
        self.backlog: list[bytes] = []   # calls not written yet: the connection opens, or the loop pass goes on
        self._flush_soon = False
        self._connecting: asyncio.Task | None = None
        self._reader_task: asyncio.Task | None = None

    def post(self, body: dict[str, Any], stream_id: str) -> None:
        data = json.dumps(body, separators=(",", ":")).encode()
        head = (f"POST {PATH} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: {JSON}\r\n"
                f"Accept: {JSON}\r\nMesos-Stream-Id: {stream_id}\r\nContent-Length: {len(data)}\r\n\r\n")
        self.kinds.append(body["type"])
        self.backlog.append(head.encode() + data)
        if self.writer is not None and not self.writer.is_closing():
            if not self._flush_soon:   # the calls of one loop pass (e.g. the ACKs of one UPDATE batch) in one write
                self._flush_soon = True
                asyncio.get_running_loop().call_soon(self._flush)
            return
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect())

    def _flush(self) -> None:
        self._flush_soon = False
        if self.backlog and self.writer is not None and not self.writer.is_closing():
            self.writer.write(b"".join(self.backlog))
            self.backlog.clear()

    async def _connect(self) -> None:
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            self._lost(f"call connection: {exc!r}")
            return
        finally:
            self._connecting = None
        self.writer = writer
        writer.write(b"".join(self.backlog))
        self.backlog.clear()
        self._reader_task = asyncio.ensure_future(self._read(reader))

    def _lost(self, why: str) -> None:
        """The connection ended: its unanswered calls are errors; the next call opens a new one."""
        if self.kinds or self.backlog:
            self.c.call_errors += len(self.kinds)
            self.c.last_error = f"{why} ({len(self.kinds)} calls unanswered)"
        self.kinds.clear()
        self.backlog.clear()
        self.writer = None

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                status_line = await reader.readline()
                if not status_line:
                    self._lost("the master closed the call connection")
                    return
                length = 0
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    name, _, val = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(val)
                body = await reader.readexactly(length) if length else b""
                kind = self.kinds.popleft() if self.kinds else "?"
                if status_line.split()[1:2] != [b"202"]:
                    self.c.call_errors += 1
                    self.c.last_error = f"{kind} answered {status_line.decode().strip()}: {body[:200]!r}"
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            self._lost(f"call connection: {exc!r}")

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self._reader_task is not None:
            self._reader_task.cancel()
            await asyncio.gather(self._reader_task, return_exceptions=True)


class LightFramework:
    """One framework: subscribe, take offers whole, acknowledge updates."""

    _ids = itertools.count(1)

    def __init__(self, index: int, master: str, streams: aiohttp.ClientSession, counters: Counters,
                 rng: random.Random, min_s: float, max_s: float) -> None:
        self.index, self.url = index, f"http://{master}{PATH}"
        host, port = master.rsplit(":", 1)
        self.streams, self.c, self.rng = streams, counters, rng
        self.pipe = CallPipe(host, int(port), counters)
        self.min_s, self.max_s = min_s, max_s
        self.framework_id: str | None = None
        self.stream_id: str | None = None
        self.launched = 0
        self.seen: dict[str, set[str]] = {}  # task id -> states seen

    async def run(self) -> None:
        info = {"user": "bench", "name": f"bench-bg-{self.index}", "failover_timeout": 0.0}
        body = {"type": "SUBSCRIBE", "subscribe": {"framework_info": info}}
        while True:
            try:
                async with self.streams.post(self.url, json=body, headers={"Accept": JSON}) as resp:
                    if resp.status != 200:
                        raise RuntimeError(f"SUBSCRIBE answered {resp.status}: {(await resp.text())[:200]}")
                    self.stream_id = resp.headers["Mesos-Stream-Id"]
                    decoder = Decoder()
                    async for chunk in resp.content.iter_any():
                        for record in decoder.feed(chunk):
                            self.on_event(json.loads(record))
                return
            except (aiohttp.ClientError, RuntimeError, OSError, asyncio.TimeoutError) as exc:
                self.c.stream_errors += 1
                self.c.last_error = f"stream: {exc}"
                await asyncio.sleep(1.0)

    def on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "SUBSCRIBED":
            self.framework_id = event["subscribed"]["framework_id"]["value"]
            self.c.subscribed += 1
        elif kind == "OFFERS":
            for offer in event["offers"].get("offers", []):
                self.c.offers += 1
                self.launch(offer)
        elif kind == "UPDATE":
            status = event["update"]["status"]
            state = status.get("state", "?")
            self.count(status["task_id"]["value"], state)
            if status.get("uuid"):
                self.call({"type": "ACKNOWLEDGE", "acknowledge": {
                    "agent_id": status["agent_id"], "task_id": status["task_id"], "uuid": status["uuid"]}})
                self.c.acks += 1

    def count(self, task_id: str, state: str) -> None:
        """Count the first update of each (task, state); later copies are resends of unacknowledged ones."""
        seen = self.seen.setdefault(task_id, set())
        if seen is ENDED or state in seen:
            self.c.duplicates += 1
            return
        self.c.updates[state] = self.c.updates.get(state, 0) + 1
        if state in TERMINAL:
            self.seen[task_id] = ENDED  # a shared marker: ended tasks cost one dict entry
        else:
            seen.add(state)

    def launch(self, offer: dict[str, Any]) -> None:
        scalars = {r["name"]: r["scalar"]["value"] for r in offer.get("resources", [])
                   if r.get("type") == "SCALAR" and r["name"] in ("cpus", "mem")}
        offer_id = offer["id"]
        if scalars.get("cpus", 0) < 0.01 or scalars.get("mem", 0) < 32:
            self.call({"type": "DECLINE", "decline": {"offer_ids": [offer_id], "filters": {"refuse_seconds": 1}}})
            return
        seconds = self.rng.uniform(self.min_s, self.max_s)
        task = {"name": "bg", "task_id": {"value": f"bg-{self.index}-{next(self._ids)}"},
                "agent_id": offer["agent_id"], "command": {"value": f"sleep {seconds:.1f}", "shell": True},
                "resources": [{"name": k, "type": "SCALAR", "scalar": {"value": v}} for k, v in scalars.items()]}
        self.c.launched += 1
        self.launched += 1
        if self.launched == 1:
            self.c.with_tasks += 1
        self.call({"type": "ACCEPT", "accept": {"offer_ids": [offer_id], "filters": {"refuse_seconds": 1},
                                                "operations": [{"type": "LAUNCH", "launch": {"task_infos": [task]}}]}})

    def call(self, body: dict[str, Any]) -> None:
        body["framework_id"] = {"value": self.framework_id}
        self.pipe.post(body, self.stream_id or "")


async def main_async(args: argparse.Namespace) -> None:
    counters = Counters()
    rng = random.Random(args.seed)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as streams:
        fws = [LightFramework(i, args.master, streams, counters, rng, args.min_s, args.max_s)
               for i in range(args.count)]
        tasks = [asyncio.ensure_future(f.run()) for f in fws]

        async def report() -> None:
            while True:
                print(counters.line(), flush=True)
                await asyncio.sleep(2.0)
        reporter = asyncio.ensure_future(report())
        await stop.wait()
        for f in fws:  # unregister: the master kills their tasks
            if f.framework_id:
                f.call({"type": "TEARDOWN"})
        await asyncio.sleep(1.0)
        for f in fws:
            await f.pipe.close()
        reporter.cancel()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, reporter, return_exceptions=True)
        print(counters.line(), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_frameworks", description=__doc__.splitlines()[0])
    parser.add_argument("--master", required=True, help="HOST:PORT of the master")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--min-s", type=float, default=5.0)
    parser.add_argument("--max-s", type=float, default=55.0)
    parser.add_argument("--seed", type=int, default=11)
    # asyncio's own loop: under uvloop 0.23 aiohttp's client lost its event streams ("unable to perform
    # operation on TCPTransport closed") once 10,000 offers arrived at once.
    asyncio.run(main_async(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
