"""RecordIO framing of the Mesos v1 event stream, sans I/O.

A record is `<decimal length>\\n<bytes>`. `encode` frames one record;
`Decoder.feed(bytes) -> list[bytes]` returns the records completed by the
bytes fed so far and keeps the rest. No sockets, no JSON.
"""

from __future__ import annotations

import json
from typing import Any

MAX_RECORD = 64 * 1024 * 1024


class RecordIOError(ValueError):
    """The byte stream is not valid RecordIO (bad length line or oversized record)."""


def encode(record: bytes) -> bytes:
    """One RecordIO frame holding `record`."""
    return b"%d\n%s" % (len(record), record)


def encode_json(obj: Any) -> bytes:
    """One RecordIO frame holding `obj` as compact JSON."""
    return encode(json.dumps(obj, separators=(",", ":")).encode())


class Decoder:
    """Incremental RecordIO decoder: feed bytes, get completed records back."""

    def __init__(self, max_record: int = MAX_RECORD) -> None:
        self._buf = bytearray()
        self._need: int | None = None
        self._max = max_record

    def feed(self, data: bytes) -> list[bytes]:
        """Records completed by `data`, in order; raises RecordIOError on bad framing."""
        self._buf += data
        out: list[bytes] = []
        while True:
            if self._need is None:
                nl = self._buf.find(b"\n")
                if nl < 0:
                    if len(self._buf) > 20:
                        raise RecordIOError("record length line too long")
                    return out
                head = bytes(self._buf[:nl])
                if not head.isdigit():
                    raise RecordIOError(f"bad record length {head[:20]!r}")
                self._need = int(head)
                if self._need > self._max:
                    raise RecordIOError(f"record of {self._need} bytes exceeds {self._max}")
                del self._buf[:nl + 1]
            if len(self._buf) < self._need:
                return out
            out.append(bytes(self._buf[:self._need]))
            del self._buf[:self._need]
            self._need = None

    @property
    def pending(self) -> int:
        """Bytes buffered that do not yet form a whole record."""
        return len(self._buf)
