"""SINGA's data records (RecordProto, common.proto) in a KVFile, to and from numpy.

What SINGA 0.3's kRecordInput does with a record, and so what we do: parse
the value as a RecordProto; take its `data` floats when it has any, else
its `pixel` bytes as unsigned values 0-255; take its `label`. The record's
own `shape` is informative only: the layer's store_conf.shape decides, and
only the number of values must agree. A mean or std file (store_conf
mean_file / std_file) is a KVFile whose first record's `data` holds one
value per input value.

Writing follows SINGA's example converters (examples/mnist and
examples/cifar10 create_data.cc): one record per image with `shape`,
`pixel` and `label`, keyed by its zero-padded index, and for CIFAR a mean
file of one record keyed "mean" with `shape` and `data`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError

from scylla_singa.jobconf import common_pb2

from .kvfile import KVFileError, read_kvfile, write_kvfile


class RecordFormatError(ValueError):
    """A KVFile whose values are not the records expected; the message says which and why."""


@dataclass(frozen=True)
class RecordSet:
    """Records read from one KVFile: features (N, values) float32, labels (N,) int64, and the first record's shape."""

    features: np.ndarray
    labels: np.ndarray
    shape: tuple[int, ...]

    @property
    def count(self) -> int:
        return int(self.features.shape[0])


def decode_record(value: bytes, source: str, index: int) -> common_pb2.RecordProto:
    record = common_pb2.RecordProto()
    try:
        record.ParseFromString(value)
    except DecodeError:
        raise RecordFormatError(f"{source}: record {index} is not a SINGA RecordProto") from None
    return record


def record_values(record: common_pb2.RecordProto) -> np.ndarray:
    """A record's values as float32: `data` when present, else `pixel` bytes (SINGA's order of preference)."""
    if len(record.data):
        return np.asarray(record.data, dtype=np.float32)
    return np.frombuffer(record.pixel, dtype=np.uint8).astype(np.float32)


def decode_records(values: list[bytes], source: str = "<records>") -> RecordSet:
    """Records from KVFile values. Raises RecordFormatError when empty, unparsable, valueless or ragged."""
    if not values:
        raise RecordFormatError(f"{source}: the KVFile holds no records")
    first = decode_record(values[0], source, 0)
    width = len(record_values(first))
    if width == 0:
        raise RecordFormatError(f"{source}: record 0 has neither data nor pixel values")
    features = np.empty((len(values), width), dtype=np.float32)
    labels = np.empty(len(values), dtype=np.int64)
    for i, value in enumerate(values):
        record = first if i == 0 else decode_record(value, source, i)
        row = record_values(record)
        if len(row) != width:
            raise RecordFormatError(f"{source}: record {i} has {len(row)} values, record 0 has {width}")
        features[i], labels[i] = row, record.label
    return RecordSet(features, labels, tuple(first.shape))


def read_records(path: str | Path) -> RecordSet:
    """Every record of a KVFile. Raises RecordFormatError, KVFileError or OSError."""
    return decode_records([value for _, value in read_kvfile(path)], str(path))


def read_first_record_data(path: str | Path) -> np.ndarray:
    """The `data` of a KVFile's first record: SINGA's mean and std files. Raises RecordFormatError."""
    tuples = read_kvfile(path)
    if not tuples:
        raise RecordFormatError(f"{path}: the KVFile holds no record")
    record = decode_record(tuples[0][1], str(path), 0)
    if not len(record.data):
        raise RecordFormatError(f"{path}: its first record has no data values (a mean or std file stores floats)")
    return np.asarray(record.data, dtype=np.float32)


def encode_image_record(pixels: np.ndarray, label: int) -> bytes:
    """One image as SINGA's create_data writes it: shape, pixel bytes (0-255) and label."""
    if pixels.dtype != np.uint8:
        raise ValueError(f"pixels must be uint8 (0-255), got {pixels.dtype}")
    record = common_pb2.RecordProto(shape=list(pixels.shape), pixel=pixels.tobytes(), label=int(label))
    return record.SerializeToString()


def write_image_records(path: str | Path, images: np.ndarray, labels: np.ndarray, key_digits: int) -> int:
    """`images` (N, *shape) uint8 with `labels` (N,) as a KVFile keyed by zero-padded index; returns N."""
    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    return write_kvfile(path, ((f"{i:0{key_digits}d}", encode_image_record(img, lab))
                               for i, (img, lab) in enumerate(zip(images, labels))))


def write_mean_record(path: str | Path, mean: np.ndarray, key: str = "mean") -> None:
    """A mean (or std) file: one record with the shape and the float values, as SINGA's cifar10 converter writes."""
    record = common_pb2.RecordProto(shape=list(mean.shape), data=np.asarray(mean, dtype=np.float32).ravel().tolist())
    write_kvfile(path, [(key, record.SerializeToString())])


__all__ = ["RecordFormatError", "RecordSet", "KVFileError", "decode_records", "read_records", "read_first_record_data",
           "encode_image_record", "write_image_records", "write_mean_record", "record_values"]
