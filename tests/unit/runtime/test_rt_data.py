"""The record store format, the digits conversion, and how workers read and share data."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from scylla_singa.datasets.digits import write_digits
from scylla_singa.jobconf import job_pb2
from scylla_singa.runtime.data import BatchStream, eval_stream, load_dataset, share_of_batch, train_stream
from scylla_singa.runtime.records import (MAGIC, RecordFormatError, decode_records, encode_records, read_records,
                                          write_records)
from scylla_singa.runtime.runtime_errors import SingaConfigError

REPO = Path(__file__).resolve().parents[3]


@settings(max_examples=40, deadline=None)
@given(feats=hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=3, max_side=6),
                        elements=st.floats(-1e6, 1e6, width=32)),
       with_labels=st.booleans(), meta=st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
def test_record_store_round_trips(feats: np.ndarray, with_labels: bool, meta: dict) -> None:
    labels = np.arange(feats.shape[0]) % 7 if with_labels else None
    data = encode_records(feats, labels, meta)
    hlen = struct.unpack_from("<I", data, 12)[0]
    assert (16 + hlen) % 16 == 0  # the data block is aligned
    got = decode_records(data)
    np.testing.assert_array_equal(got.features, feats)
    assert (got.labels is None) == (not with_labels)
    if with_labels:
        np.testing.assert_array_equal(got.labels, labels)
    assert got.meta == meta


@pytest.mark.parametrize("mutate,msg", [
    (lambda b: b"NOTRECRD" + b[8:], "not a record store"),
    (lambda b: b[:8] + struct.pack("<H", 9) + b[10:], "version 9"),
    (lambda b: b[:-4], "truncated"),
    (lambda b: b[:10], "too short"),
], ids=["bad-magic", "future-version", "truncated", "too-short"])
def test_record_store_refuses_what_it_cannot_read(mutate, msg: str) -> None:
    good = encode_records(np.ones((3, 2), np.float32), np.array([0, 1, 2]))
    assert good.startswith(MAGIC)
    with pytest.raises(RecordFormatError, match=msg):
        decode_records(mutate(good))


def test_write_records_is_atomic_and_readable(tmp_path: Path) -> None:
    write_records(tmp_path / "x.bin", np.eye(3, dtype=np.float32), np.array([2, 1, 0]))
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]
    got = read_records(tmp_path / "x.bin")
    assert got.count == 3 and got.shape == (3,)


def test_digits_conversion_is_fixed_and_complete(tmp_path: Path, digits_dir: Path) -> None:
    write_digits(tmp_path)
    for name in ("train.csv", "test.csv", "train.bin", "test.bin", "meta.json"):
        assert (tmp_path / name).read_bytes() == (digits_dir / name).read_bytes(), name
    train, test = read_records(tmp_path / "train.bin"), read_records(tmp_path / "test.bin")
    assert (train.count, test.count, train.shape) == (1437, 360, (64,))
    assert set(np.unique(train.labels)) == set(range(10))
    assert train.features.min() == 0 and train.features.max() == 16
    lines = (tmp_path / "train.csv").read_text().splitlines()
    assert len(lines) == 1437 and len(lines[0].split(",")) == 65


def test_data_command_writes_the_files(tmp_path: Path) -> None:
    out = tmp_path / "d"
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "scylla-singa"), "data", "digits", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "1437 train, 360 test" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["meta.json", "test.bin", "test.csv", "train.bin", "train.csv"]


def input_layer(kind: str, path: Path, batch: int = 64, extra: str = "") -> job_pb2.LayerProto:
    layer = job_pb2.LayerProto()
    text_format.Parse(f'name: "data" type: {kind} store_conf {{ path: "{path}" batchsize: {batch} shape: 64 '
                      f"std_value: 16 {extra} }}", layer)
    return layer


def test_csv_and_record_inputs_read_the_same_normalised_data(digits_dir: Path) -> None:
    a = load_dataset(input_layer("kCSVInput", digits_dir / "train.csv"))
    b = load_dataset(input_layer("kRecordInput", digits_dir / "train.bin"))
    np.testing.assert_allclose(a.features, b.features)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.features.max() == pytest.approx(1.0)
    c = load_dataset(input_layer("kCSVInput", digits_dir / "train.csv", extra="mean_value: 8"))
    np.testing.assert_allclose(c.features, (a.features * 16 - 8) / 16, atol=1e-6)


@pytest.mark.parametrize("kind,name,extra,msg", [
    ("kCSVInput", "missing.csv", "", "does not exist"),
    ("kRecordInput", "train.csv", "", "not a record store"),
    ("kCSVInput", "train.csv", "", None),
], ids=["missing-file", "csv-as-records", "fine"])
def test_input_errors_name_the_layer(digits_dir: Path, kind, name, extra, msg) -> None:
    layer = input_layer(kind, digits_dir / name, extra=extra)
    if msg is None:
        assert len(load_dataset(layer)) == 1437
        return
    with pytest.raises(SingaConfigError, match=f'layer "data": .*{msg}'):
        load_dataset(layer)


def test_shape_mismatch_is_a_config_error(digits_dir: Path) -> None:
    layer = input_layer("kCSVInput", digits_dir / "test.csv")
    layer.store_conf.shape[0] = 63
    with pytest.raises(SingaConfigError, match="means 63 values per record"):
        load_dataset(layer)


@pytest.mark.parametrize("batch,n", [(64, 1), (64, 3), (7, 7), (10, 4)], ids=["1", "3", "7", "4"])
def test_a_groups_batch_is_split_among_its_workers(batch: int, n: int) -> None:
    shares = [share_of_batch(batch, n, j) for j in range(n)]
    assert sum(shares) == batch and max(shares) - min(shares) <= 1


def test_workers_of_a_group_read_disjoint_shards(digits_dir: Path) -> None:
    layer = input_layer("kCSVInput", digits_dir / "train.csv", extra="random_skip: 50")
    streams = [train_stream(layer, 0, j, 3, seed=11) for j in range(3)]
    shards = [set(s.indices.tolist()) for s in streams]
    assert all(not (a & b) for i, a in enumerate(shards) for b in shards[i + 1:])
    assert set().union(*shards) == set(range(1437))
    assert [s.batch for s in streams] == [22, 21, 21]
    other_group = train_stream(layer, 1, 0, 3, seed=11)
    assert not np.array_equal(other_group.next()[1], train_stream(layer, 0, 0, 3, seed=11).next()[1])


def test_a_training_stream_covers_its_shard_every_epoch(digits_dir: Path) -> None:
    data = load_dataset(input_layer("kCSVInput", digits_dir / "test.csv"))
    stream = BatchStream(data, np.arange(10), 4, np.random.default_rng(1), skip=3)
    seen = [stream.next()[0] for _ in range(5)]  # 20 samples = 2 epochs (after the skip)
    assert all(s.shape == (4, 64) for s in seen)


def test_evaluation_streams_read_in_order_from_the_start(digits_dir: Path) -> None:
    stream = eval_stream(input_layer("kCSVInput", digits_dir / "test.csv", batch=100))
    first = stream.next()[1]
    stream.next()
    stream.reset()
    np.testing.assert_array_equal(stream.next()[1], first)
    assert stream.batch == 100
