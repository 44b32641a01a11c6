"""The project's binary record store: labelled feature vectors in one file, readable with numpy only.

SINGA v0's kRecordInput read protobuf records from a "kvfile"; this runtime
reads this simpler, versioned, self-describing format instead (the
`scylla-singa data` command writes it). Layout, all integers little-endian:

    offset  size        field
    0       8           magic  b"SGRECORD"
    8       2           format version (uint16), currently 1
    10      2           reserved, 0
    12      4           header length H (uint32)
    16      H           header: UTF-8 JSON, space-padded so the data starts
                        at a multiple of 16 bytes
                        {"count": N, "shape": [d1, ...], "dtype": "<f4",
                         "label_dtype": "<i4", "has_label": true, "meta": {...}}
    16+H    N*4         labels (label_dtype), present only when has_label
    ...     N*prod*4    features (dtype), record after record, row-major

A reader must refuse a file whose magic differs or whose version it does not
know; a file shorter than its header promises is refused too. Files are
written atomically (temporary name, then rename).
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"SGRECORD"
VERSION = 1
_PREFIX = struct.Struct("<8sHHI")
_ALIGN = 16


class RecordFormatError(ValueError):
    """The file is not a record store this reader understands; the message says why."""


@dataclass(frozen=True)
class RecordSet:
    """Records read from one file: features (N, *shape) and labels (N,) or None."""

    features: np.ndarray
    labels: np.ndarray | None
    meta: dict = field(default_factory=dict)

    @property
    def count(self) -> int:
        return int(self.features.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.features.shape[1:])


def encode_records(features: np.ndarray, labels: np.ndarray | None = None, meta: dict | None = None) -> bytes:
    """The file's bytes for `features` (N, ...) as float32 and optional integer `labels` (N,)."""
    feats = np.ascontiguousarray(features, dtype="<f4")
    if feats.ndim < 2:
        raise ValueError(f"features must be (count, ...) with at least 2 dimensions, got shape {feats.shape}")
    if labels is not None:
        labs = np.ascontiguousarray(labels, dtype="<i4")
        if labs.shape != (feats.shape[0],):
            raise ValueError(f"labels must have shape ({feats.shape[0]},), got {labs.shape}")
    header = {"count": int(feats.shape[0]), "shape": list(feats.shape[1:]), "dtype": "<f4",
              "label_dtype": "<i4", "has_label": labels is not None, "meta": meta or {}}
    raw = json.dumps(header, sort_keys=True).encode()
    pad = (-(_PREFIX.size + len(raw))) % _ALIGN
    raw += b" " * pad
    parts = [_PREFIX.pack(MAGIC, VERSION, 0, len(raw)), raw]
    if labels is not None:
        parts.append(labs.tobytes())
    parts.append(feats.tobytes())
    return b"".join(parts)


def decode_records(buf: bytes, source: str = "<bytes>") -> RecordSet:
    """Parse a record store held in memory. Raises RecordFormatError."""
    if len(buf) < _PREFIX.size:
        raise RecordFormatError(f"{source}: too short to be a record store ({len(buf)} bytes)")
    magic, version, _, hlen = _PREFIX.unpack_from(buf, 0)
    if magic != MAGIC:
        raise RecordFormatError(f"{source}: not a record store (magic {magic!r}, expected {MAGIC!r})")
    if version != VERSION:
        raise RecordFormatError(f"{source}: record store version {version}; this runtime reads version {VERSION}")
    try:
        header = json.loads(buf[_PREFIX.size:_PREFIX.size + hlen].decode())
        count, shape = int(header["count"]), tuple(int(d) for d in header["shape"])
        dtype, ldtype = np.dtype(header["dtype"]), np.dtype(header["label_dtype"])
        has_label = bool(header["has_label"])
    except (ValueError, KeyError, TypeError) as exc:
        raise RecordFormatError(f"{source}: bad record store header: {exc}") from None
    offset = _PREFIX.size + hlen
    per = math.prod(shape)
    need = offset + (count * ldtype.itemsize if has_label else 0) + count * per * dtype.itemsize
    if len(buf) < need:
        raise RecordFormatError(f"{source}: truncated: header promises {need} bytes, file has {len(buf)}")
    labels = None
    if has_label:
        labels = np.frombuffer(buf, dtype=ldtype, count=count, offset=offset).astype(np.int64)
        offset += count * ldtype.itemsize
    feats = np.frombuffer(buf, dtype=dtype, count=count * per, offset=offset).reshape((count,) + shape)
    return RecordSet(feats.astype(np.float32), labels, dict(header.get("meta") or {}))


def write_records(path: str | Path, features: np.ndarray, labels: np.ndarray | None = None,
                  meta: dict | None = None) -> None:
    """Write a record store atomically: a temporary name in the same directory, then rename."""
    target = Path(path)
    data = encode_records(features, labels, meta)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)


def read_records(path: str | Path) -> RecordSet:
    """Read a record store file. Raises RecordFormatError or OSError."""
    return decode_records(Path(path).read_bytes(), str(path))
