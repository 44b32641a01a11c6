"""Reading the engine's raw streams (`docker exec` and `docker attach` sockets), in a worker thread.

Without a terminal the engine multiplexes stdout and stderr on one socket:
each frame is an 8-byte header (the stream: 1 stdout, 2 stderr; then the
size, big-endian, in the last four bytes) and that many bytes. With a
terminal the stream is the bytes themselves.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable

STDOUT, STDERR = 1, 2


def read_multiplexed(raw: socket.socket, emit: Callable[[int, bytes], None]) -> None:
    """Hand each frame's (stream, bytes) to `emit` until the socket ends or fails (blocking)."""
    while True:
        header = recv_exactly(raw, 8)
        if header is None:
            return
        kind, size = header[0], struct.unpack(">I", header[4:])[0]
        data = recv_exactly(raw, size)
        if data is None:
            return
        if kind in (STDOUT, STDERR):
            emit(kind, data)


def read_plain(raw: socket.socket, emit: Callable[[bytes], None]) -> None:
    """Hand each chunk a terminal's stream carries to `emit` until the socket ends or fails (blocking)."""
    while chunk := recv_some(raw):
        emit(chunk)


def recv_some(raw: socket.socket) -> bytes:
    """What the socket has next; empty at its end or on an error."""
    try:
        return raw.recv(65536)
    except OSError:
        return b""


def recv_exactly(raw: socket.socket, size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        try:
            chunk = raw.recv(size - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)
