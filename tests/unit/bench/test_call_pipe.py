"""The scale benchmark's background frameworks write their calls pipelined (bench/scale_frameworks.CallPipe).

- The calls made in one pass of the loop (the ACKs of one batch of status
  updates) reach the master in one write, in order, and every answer is
  counted: a 202 is no error, anything else is one, with its text.
- Calls made while the connection opens are written once it is open.
"""

from __future__ import annotations

import asyncio
import json

from bench.scale_frameworks import CallPipe, Counters


class _Server:
    """A loopback HTTP/1.1 endpoint that records every chunk it reads and answers each request with the
    status its body's "type" asks for (202 unless the type is REFUSE)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.bodies: list[dict] = []
        self.server: asyncio.base_events.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        buffer = b""
        while chunk := await reader.read(65536):
            self.chunks.append(chunk)
            buffer += chunk
            while b"\r\n\r\n" in buffer:
                head, rest = buffer.split(b"\r\n\r\n", 1)
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                if len(rest) < length:
                    break
                body, buffer = json.loads(rest[:length]), rest[length:]
                self.bodies.append(body)
                status = b"400 Bad Request" if body["type"] == "REFUSE" else b"202 Accepted"
                writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 2\r\n\r\nno")
        writer.close()

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


async def _until(check, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def test_one_loop_pass_of_calls_is_one_write_and_every_answer_is_counted() -> None:
    async def main() -> None:
        server = _Server()
        port = await server.start()
        counters = Counters()
        pipe = CallPipe("127.0.0.1", port, counters)
        try:
            pipe.post({"type": "DECLINE", "n": 0}, "s")   # opens the connection
            await _until(lambda: len(server.bodies) == 1)
            assert pipe.writer is not None
            server.chunks.clear()
            for n in range(1, 4):
                pipe.post({"type": "ACKNOWLEDGE", "n": n}, "s")
            pipe.post({"type": "REFUSE", "n": 4}, "s")
            await _until(lambda: len(server.bodies) == 5 and not pipe.kinds)
            assert [b["n"] for b in server.bodies] == [0, 1, 2, 3, 4]
            assert len(server.chunks) == 1   # the four calls of that pass came in one write
            assert counters.call_errors == 1 and counters.last_error.startswith("REFUSE answered HTTP/1.1 400")
        finally:
            await pipe.close()
            await server.stop()

    asyncio.run(main())
