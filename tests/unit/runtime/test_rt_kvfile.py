"""SINGA's KVFile and RecordProto records: byte layouts written by hand from the format, round trips, refusals;
and the digits data sets `scylla-singa data` writes in them."""

from __future__ import annotations

import json
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.jobconf import common_pb2
from scylla_singa.datasets.digits import CIFAR_SHAPED, MNIST_SHAPED, digits_split, resize_matrix, write_digits_set
from scylla_singa.runtime.kvfile import KVFileError, KVFileWriter, decode_tuples, read_kvfile, write_kvfile
from scylla_singa.runtime.records import (RecordFormatError, decode_records, encode_image_record,
                                          read_first_record_data, read_records, write_image_records,
                                          write_mean_record)

REPO = Path(__file__).resolve().parents[3]


def size_t(n: int) -> bytes:
    """SINGA's length fields: a size_t, 8 bytes little-endian."""
    return n.to_bytes(8, "little")


# Two tuples as SINGA's KVFile::Insert lays them out: key length, key, value length, value; nothing else.
GOLDEN_KVFILE = size_t(8) + b"00000000" + size_t(3) + b"abc" + size_t(8) + b"00000001" + size_t(1) + b"\x00"

# RecordProto{shape: [2, 2], label: 7, pixel: 00 01 02 03}: shape unpacked (proto2 repeated int32, field 1,
# varint), label field 2 varint, pixel field 3 length-delimited; fields in number order.
GOLDEN_RECORD = bytes([0x08, 2, 0x08, 2, 0x10, 7, 0x1A, 4, 0, 1, 2, 3])

# RecordProto{shape: [2], data: [1.5, -2]}: data is packed (field 4, length-delimited, 8 bytes of float32).
GOLDEN_MEAN = bytes([0x08, 2, 0x22, 8]) + struct.pack("<2f", 1.5, -2.0)


def test_the_file_layout_is_singas_byte_for_byte(tmp_path: Path) -> None:
    assert write_kvfile(tmp_path / "f.bin", [("00000000", b"abc"), (b"00000001", b"\x00")]) == 2
    assert (tmp_path / "f.bin").read_bytes() == GOLDEN_KVFILE
    assert read_kvfile(tmp_path / "f.bin") == [(b"00000000", b"abc"), (b"00000001", b"\x00")]


def test_a_record_is_singas_byte_for_byte() -> None:
    assert encode_image_record(np.array([[0, 1], [2, 3]], np.uint8), 7) == GOLDEN_RECORD
    mean = common_pb2.RecordProto(shape=[2], data=[1.5, -2.0])
    assert mean.SerializeToString() == GOLDEN_MEAN


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.binary(max_size=20), st.binary(min_size=1, max_size=200), max_size=12))
def test_tuples_round_trip(items: dict[bytes, bytes]) -> None:
    blob = b"".join(size_t(len(k)) + k + size_t(len(v)) + v for k, v in items.items())
    assert list(decode_tuples(blob)) == list(items.items())


@pytest.mark.parametrize("cut,msg", [
    (3, "cut short in its key length"),
    (len(GOLDEN_KVFILE) - 1, "declares a 1-byte value"),
    (12, "declares a 8-byte key"),
], ids=["inside-a-length", "inside-the-last-value", "inside-a-key"])
def test_a_cut_file_is_refused_with_the_offset(cut: int, msg: str) -> None:
    with pytest.raises(KVFileError, match=msg):
        list(decode_tuples(GOLDEN_KVFILE[:cut], "f.bin"))


def test_something_else_read_as_a_kvfile_is_refused() -> None:
    with pytest.raises(KVFileError, match="not a KVFile"):
        list(decode_tuples(b"4,0,0,3,14,9,0\n" * 20, "train.csv"))


def test_the_writer_refuses_what_singas_refuses(tmp_path: Path) -> None:
    """A repeated key and an empty value; and a failed write leaves no file behind."""
    with pytest.raises(KVFileError, match="already in the file"):
        with KVFileWriter(tmp_path / "dup.bin") as w:
            w.add("k", b"1")
            w.add("k", b"2")
    with pytest.raises(KVFileError, match="empty value"):
        write_kvfile(tmp_path / "empty.bin", [("k", b"")])
    assert list(tmp_path.iterdir()) == []


def test_a_directory_means_its_shard_dat(tmp_path: Path) -> None:
    write_kvfile(tmp_path / "shard.dat", [("a", b"1")])
    assert read_kvfile(tmp_path) == [(b"a", b"1")]


def test_records_read_pixels_or_data_as_singas_record_input_does(tmp_path: Path) -> None:
    write_image_records(tmp_path / "r.bin", np.array([[[0, 255], [7, 9]], [[1, 2], [3, 4]]], np.uint8),
                        np.array([3, 5]), key_digits=5)
    assert [k for k, _ in read_kvfile(tmp_path / "r.bin")] == [b"00000", b"00001"]
    got = read_records(tmp_path / "r.bin")
    np.testing.assert_array_equal(got.features, [[0, 255, 7, 9], [1, 2, 3, 4]])
    np.testing.assert_array_equal(got.labels, [3, 5])
    assert got.shape == (2, 2)
    floats = decode_records([GOLDEN_MEAN])  # `data` is used when present
    np.testing.assert_array_equal(floats.features, [[1.5, -2.0]])


def test_mean_files_hold_floats_in_their_first_record(tmp_path: Path) -> None:
    write_mean_record(tmp_path / "m.bin", np.array([1.5, -2.0], np.float32).reshape(2))
    assert (tmp_path / "m.bin").read_bytes() == size_t(4) + b"mean" + size_t(len(GOLDEN_MEAN)) + GOLDEN_MEAN
    np.testing.assert_array_equal(read_first_record_data(tmp_path / "m.bin"), [1.5, -2.0])
    write_image_records(tmp_path / "p.bin", np.zeros((1, 2), np.uint8), np.array([0]), key_digits=1)
    with pytest.raises(RecordFormatError, match="no data values"):
        read_first_record_data(tmp_path / "p.bin")


@pytest.mark.parametrize("values,msg", [
    ([], "holds no records"),
    ([GOLDEN_RECORD, GOLDEN_MEAN], "record 1 has 2 values, record 0 has 4"),
    ([b"\x08"], "record 0 is not a SINGA RecordProto"),
    ([bytes([0x10, 7])], "neither data nor pixel"),
], ids=["empty", "ragged", "not-protobuf", "no-values"])
def test_bad_records_are_refused(values: list[bytes], msg: str) -> None:
    with pytest.raises(RecordFormatError, match=msg):
        decode_records(values, "x.bin")


def test_digits_files_are_fixed_kvfiles_and_csv(tmp_path: Path, digits_dir: Path) -> None:
    from scylla_singa.datasets.digits import write_digits

    write_digits(tmp_path)
    for name in ("train.csv", "test.csv", "train.bin", "test.bin", "meta.json"):
        assert (tmp_path / name).read_bytes() == (digits_dir / name).read_bytes(), name
    train, test = read_records(tmp_path / "train.bin"), read_records(tmp_path / "test.bin")
    assert (train.count, test.count, train.shape) == (1437, 360, (8, 8))
    assert set(np.unique(train.labels)) == set(range(10))
    assert train.features.min() == 0 and train.features.max() == 16
    lines = (tmp_path / "train.csv").read_text().splitlines()
    assert len(lines) == 1437 and [float(v) for v in lines[0].split(",")[1:]] == train.features[0].tolist()
    assert int(lines[0].split(",")[0]) == train.labels[0]


def test_resizing_keeps_a_constant_image_constant_and_spans_the_input() -> None:
    r = resize_matrix(8, 20)
    np.testing.assert_allclose(r.sum(axis=1), 1.0)
    image = np.arange(64, dtype=float).reshape(8, 8)
    scaled = r @ image @ r.T
    assert scaled.min() == image.min() and scaled.max() == image.max()


@pytest.mark.parametrize("variant,stored,key", [(MNIST_SHAPED, (28, 28), b"00000000"),
                                              (CIFAR_SHAPED, (3, 32, 32), b"00000")], ids=["mnist", "cifar"])
def test_shaped_sets_are_the_digits_in_singas_example_shapes(tmp_path: Path, variant, stored, key) -> None:
    meta = write_digits_set(tmp_path, variant)
    train = read_records(tmp_path / f"{variant.prefix}train.bin")
    assert train.shape == stored and train.features.shape[1] == int(np.prod(stored))
    assert read_kvfile(tmp_path / f"{variant.prefix}test.bin")[0][0] == key
    assert train.features.min() == 0 and train.features.max() == 255
    np.testing.assert_array_equal(train.labels, digits_split()["train"][1])
    image = train.features[0].reshape(stored)
    if variant is MNIST_SHAPED:  # MNIST's frame: nothing in the 4-pixel border
        assert image[:4].max() == 0 and image[-4:].max() == 0 and image[:, :4].max() == 0
    else:  # the same grey in every channel
        np.testing.assert_array_equal(image[0], image[1])
        np.testing.assert_array_equal(image[0], image[2])
        mean = read_first_record_data(tmp_path / variant.mean_file)
        np.testing.assert_allclose(mean, train.features.mean(axis=0), rtol=1e-5)
    written = json.loads((tmp_path / variant.meta_file).read_text())
    assert written == meta and written["derived"] and "load_digits" in written["source"]
    assert all(name.startswith("digits-as-") for name in written["files"].values())


def test_the_data_command_writes_each_set(tmp_path: Path) -> None:
    exe = str(REPO / ".venv" / "bin" / "scylla-singa")
    expected = {"digits": ["meta.json", "test.bin", "test.csv", "train.bin", "train.csv"],
                "mnist-shaped": ["digits-as-mnist-test.bin", "digits-as-mnist-test.csv", "digits-as-mnist-train.bin",
                                 "digits-as-mnist-train.csv", "digits-as-mnist.json"]}
    for name, files in expected.items():
        proc = subprocess.run([exe, "data", name, "--out", str(tmp_path / name)], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "1437 train and 360 test records" in proc.stdout
        assert sorted(p.name for p in (tmp_path / name).iterdir()) == files
    helptext = subprocess.run([exe, "data", "cifar-shaped", "--help"], capture_output=True, text=True, timeout=60)
    assert "NOT CIFAR-10" in helptext.stdout
