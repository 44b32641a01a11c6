"""ATTACH_CONTAINER_OUTPUT's source: a running container's output from the moment of the call to its end,
as ProcessIO DATA records (what `mesos task attach --no-stdin` prints).

A Docker task's container is followed through the engine (`docker attach`
to its stdout and stderr, never its stdin; one stream, STDOUT, when it runs
on a terminal). A process task's or a
standalone container's output goes to its sandbox's `stdout` and `stderr`
files (as Mesos writes them); they are followed from their current end
until the process ended, then read to their end. Only what comes after the
attach is sent, as Mesos's I/O switchboard sends it: earlier output is in
the sandbox files (`/files/read`).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from .confined_paths import open_sandbox_file
from .docker_streams import read_multiplexed, read_plain
from .nested_containers import END, STREAM_NAMES, Parent, ProcessIO, data_record

FILE_POLL_S = 0.1   # how often a sandbox file is read for what was appended (files give no readiness)
FILE_CHUNK = 65536


async def follow_output(container: Parent, docker_client: Any = None) -> AsyncIterator[ProcessIO]:
    """The container's output records from now until it ended. What can fail (the engine refusing the
    attach, a sandbox file missing) fails here, before a record is asked for: OSError or the engine's
    error. The caller may leave the iterator early; closing it stops following."""
    if container.docker_id is not None:
        loop = asyncio.get_running_loop()
        sock = await loop.run_in_executor(None, lambda: docker_client.api.attach_socket(
            container.docker_id, params={"stdout": 1, "stderr": 1, "stream": 1}))
        return _docker_output(getattr(sock, "_sock", sock), container.docker_tty)
    assert container.sandbox is not None
    files = []
    try:
        for kind in ("STDOUT", "STDERR"):
            handle = open_sandbox_file(container.sandbox / kind.lower(), "rb")   # the iterator closes it
            handle.seek(0, 2)
            files.append((kind, handle))
    except OSError:
        for _, handle in files:
            handle.close()
        raise
    return _sandbox_output(files, container)


async def _docker_output(raw: socket.socket, tty: bool) -> AsyncIterator[ProcessIO]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def put(kind: str, chunk: bytes) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, data_record(kind, chunk))

    def read() -> None:   # a container with a terminal has one stream, all STDOUT
        if tty:
            read_plain(raw, lambda chunk: put("STDOUT", chunk))
        else:
            read_multiplexed(raw, lambda kind, chunk: put(STREAM_NAMES[kind], chunk))
        loop.call_soon_threadsafe(queue.put_nowait, END)

    reader = loop.run_in_executor(None, read)
    try:
        while (record := await queue.get()) is not END:
            yield record
    finally:
        try:
            raw.shutdown(socket.SHUT_RDWR)   # wakes the reader if the caller left first
        except OSError:
            pass
        await reader
        raw.close()


async def _sandbox_output(files: list[tuple[str, BinaryIO]], container: Parent) -> AsyncIterator[ProcessIO]:
    ended = asyncio.ensure_future(container.ended())
    try:
        while True:
            last_look = ended.done()   # read once more after the end: what it wrote last
            for kind, handle in files:
                while chunk := handle.read(FILE_CHUNK):
                    yield data_record(kind, chunk)
            if last_look:
                return
            await asyncio.wait({ended}, timeout=FILE_POLL_S)
    finally:
        ended.cancel()
        for _, handle in files:
            handle.close()
