"""SINGA's KVFile: the file behind its `kvfile` store backend, read and written here.

The format, from SINGA 0.3's src/io/kvfile.cc (our own code, written from
these facts): a file is a sequence of tuples and nothing else (no header,
no index, no padding):

    key length     size_t: 8 bytes, little-endian (SINGA's x86-64 and arm64 builds)
    key            that many bytes (SINGA's examples use zero-padded record numbers)
    value length   size_t
    value          that many bytes (a serialised RecordProto for kRecordInput)

SINGA's writer refuses a key it has already written to the file and an
empty value; so does ours. Opening a directory reads DIR/shard.dat, as
SINGA's reader does. SINGA's reader stops silently at a tuple cut short;
ours refuses such a file, naming the offset, because a cut file is a broken
data set (the usual cause is reading something that is not a KVFile).

Sans-I/O at the core (`encode_tuple`, `decode_tuples`); `read_kvfile` and
`KVFileWriter` add the file, the writer atomically (temporary name, rename).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType

from scylla_singa.common.files import temporary_name

LENGTH = struct.Struct("<Q")
DIRECTORY_FILE = "shard.dat"


class KVFileError(ValueError):
    """Not a KVFile this reader accepts, or a tuple the writer refuses; the message says why and where."""


def encode_tuple(key: bytes, value: bytes) -> bytes:
    """One tuple's bytes."""
    return LENGTH.pack(len(key)) + key + LENGTH.pack(len(value)) + value


def decode_tuples(buf: bytes | memoryview, source: str = "<bytes>") -> Iterator[tuple[bytes, bytes]]:
    """Every (key, value) of a KVFile held in memory, in file order. Raises KVFileError on a cut tuple."""
    view = memoryview(buf)
    offset, count = 0, 0
    while offset < len(view):
        key, offset = _field(view, offset, source, count, "key")
        value, offset = _field(view, offset, source, count, "value")
        count += 1
        yield bytes(key), bytes(value)


def _field(view: memoryview, offset: int, source: str, index: int, what: str) -> tuple[memoryview, int]:
    if offset + LENGTH.size > len(view):
        raise KVFileError(f"{source}: not a complete KVFile: tuple {index} is cut short in its {what} length "
                          f"at byte {offset} of {len(view)}")
    (size,) = LENGTH.unpack_from(view, offset)
    start = offset + LENGTH.size
    if start + size > len(view):
        raise KVFileError(f"{source}: not a KVFile, or a truncated one: tuple {index} declares a {size}-byte "
                          f"{what} at byte {offset}, but only {len(view) - start} bytes follow")
    return view[start:start + size], start + size


def kvfile_path(path: str | Path) -> Path:
    """The file SINGA reads for `path`: DIR/shard.dat when `path` is a directory."""
    p = Path(path)
    return p / DIRECTORY_FILE if p.is_dir() else p


def read_kvfile(path: str | Path) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of the KVFile at `path`. Raises KVFileError or OSError."""
    p = kvfile_path(path)
    return list(decode_tuples(p.read_bytes(), str(p)))


class KVFileWriter:
    """Writes a new KVFile at `path`, visible under its name only once closed without error.

    `add` refuses a repeated key and an empty value (KVFileError), as SINGA's writer does.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._tmp = self.path.with_name(temporary_name(self.path.name))
        self._fh = open(self._tmp, "wb")
        self._keys: set[bytes] = set()

    def add(self, key: bytes | str, value: bytes) -> None:
        k = key.encode() if isinstance(key, str) else key
        if k in self._keys:
            raise KVFileError(f"{self.path}: key {k!r} is already in the file")
        if not value:
            raise KVFileError(f"{self.path}: key {k!r} has an empty value, which a KVFile cannot hold")
        self._keys.add(k)
        self._fh.write(encode_tuple(k, value))

    def close(self) -> None:
        """Flush, sync and rename into place."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        self._fh.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> "KVFileWriter":
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


def write_kvfile(path: str | Path, items: Iterable[tuple[bytes | str, bytes]]) -> int:
    """Write `items` as a new KVFile at `path` atomically; returns how many tuples were written."""
    count = 0
    with KVFileWriter(path) as writer:
        for key, value in items:
            writer.add(key, value)
            count += 1
    return count
