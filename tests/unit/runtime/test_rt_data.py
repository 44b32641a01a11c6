"""How input layers read their data (SINGA's CSV and KVFile records, mean and std), and how workers share it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format
from scylla_singa.jobconf import job_pb2
from scylla_singa.runtime.data import BatchStream, eval_stream, load_dataset, share_of_batch, train_stream
from scylla_singa.runtime.runtime_errors import SingaConfigError
from scylla_singa.runtime.kvfile import write_kvfile
from scylla_singa.runtime.records import write_mean_record

BACKEND = {"kCSVInput": "textfile", "kRecordInput": "kvfile"}


def input_layer(kind: str, path: Path, batch: int = 64, extra: str = "std_value: 16",
                shape: str = "shape: 64") -> job_pb2.LayerProto:
    layer = job_pb2.LayerProto()
    text_format.Parse(f'name: "data" type: {kind} store_conf {{ backend: "{BACKEND[kind]}" path: "{path}" '
                      f"batchsize: {batch} {shape} {extra} }}", layer)
    return layer


def test_csv_and_record_inputs_read_the_same_normalised_data(digits_dir: Path) -> None:
    a = load_dataset(input_layer("kCSVInput", digits_dir / "train.csv"))
    b = load_dataset(input_layer("kRecordInput", digits_dir / "train.bin"))
    np.testing.assert_allclose(a.features, b.features)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.features.max() == pytest.approx(1.0)
    c = load_dataset(input_layer("kCSVInput", digits_dir / "train.csv", extra="std_value: 16 mean_value: 8"))
    np.testing.assert_allclose(c.features, (a.features * 16 - 8) / 16, atol=1e-6)


def test_the_8x8_records_can_be_read_as_images(digits_dir: Path) -> None:
    """Only the number of values must match store_conf.shape (SINGA's rule), so 8 8 reads the 64-value records."""
    data = load_dataset(input_layer("kRecordInput", digits_dir / "train.bin", shape="shape: 8 shape: 8"))
    assert data.features.shape == (1437, 8, 8)


@pytest.mark.parametrize("kind", ["kRecordInput", "kCSVInput"])
def test_mean_and_std_files_apply_per_value(tmp_path: Path, digits_dir: Path, kind: str) -> None:
    """A mean/std file is a KVFile record for record inputs and a CSV line for CSV inputs, as SINGA reads them."""
    mean, std = np.arange(64, dtype=np.float32) / 8, np.full(64, 2.0, dtype=np.float32)
    name = "train.bin" if kind == "kRecordInput" else "train.csv"
    if kind == "kRecordInput":
        write_mean_record(tmp_path / "mean.bin", mean.reshape(8, 8))
        write_mean_record(tmp_path / "std.bin", std, key="std")
    else:
        (tmp_path / "mean.bin").write_text(",".join(map(str, mean.tolist())) + "\n9,9\n")
        (tmp_path / "std.bin").write_text(",".join(map(str, std.tolist())) + "\n")
    raw = load_dataset(input_layer(kind, digits_dir / name, extra=""))
    got = load_dataset(input_layer(kind, digits_dir / name,
                                   extra=f'mean_file: "{tmp_path}/mean.bin" std_file: "{tmp_path}/std.bin"'))
    np.testing.assert_allclose(got.features, (raw.features - mean) / std, atol=1e-6)


def test_a_mean_file_of_the_wrong_size_is_refused(tmp_path: Path, digits_dir: Path) -> None:
    write_mean_record(tmp_path / "mean.bin", np.zeros(63, np.float32))
    layer = input_layer("kRecordInput", digits_dir / "train.bin", extra=f'mean_file: "{tmp_path}/mean.bin"')
    with pytest.raises(SingaConfigError, match="mean_file .* holds 63 values; store_conf.shape \\[64\\] needs 64"):
        load_dataset(layer)


def test_csv_lines_follow_singas_tokenizer(tmp_path: Path) -> None:
    """Any separator character ends a field; a trailing separator is allowed; the field count must be exact."""
    (tmp_path / "ok.csv").write_text("1;2,3,\n0,4;5\n")
    layer = input_layer("kCSVInput", tmp_path / "ok.csv", extra='separator: ",;"', shape="shape: 2")
    data = load_dataset(layer)
    np.testing.assert_array_equal(data.features, [[2, 3], [4, 5]])
    np.testing.assert_array_equal(data.labels, [1, 0])
    (tmp_path / "bad.csv").write_text("1,2,3\n0,4\n")
    with pytest.raises(SingaConfigError, match="bad.csv:2: 2 fields, expected 3"):
        load_dataset(input_layer("kCSVInput", tmp_path / "bad.csv", extra="", shape="shape: 2"))


@pytest.mark.parametrize("kind,name,extra,msg", [
    ("kCSVInput", "missing.csv", "", "does not exist"),
    ("kRecordInput", "train.csv", "", "not a KVFile"),
    ("kRecordInput", "garbage.bin", "", "is not a SINGA RecordProto"),
    ("kCSVInput", "train.csv", "", None),
], ids=["missing-file", "csv-as-kvfile", "kvfile-of-non-records", "fine"])
def test_input_errors_name_the_layer(tmp_path: Path, digits_dir: Path, kind, name, extra, msg) -> None:
    write_kvfile(tmp_path / "garbage.bin", [("0", b"\xff\xff\xff")])
    folder = tmp_path if name == "garbage.bin" else digits_dir
    layer = input_layer(kind, folder / name, extra=extra)
    if msg is None:
        assert len(load_dataset(layer)) == 1437
        return
    with pytest.raises(SingaConfigError, match=f'layer "data": .*{msg}'):
        load_dataset(layer)


@pytest.mark.parametrize("kind,name,msg", [
    ("kCSVInput", "test.csv", "test.csv:1: 65 fields, expected 64 \\(a label and 63 values for store_conf.shape"),
    ("kRecordInput", "test.bin", "store_conf.shape \\[63\\] means 63 values per record, but .* has 64"),
], ids=["csv", "kvfile"])
def test_shape_mismatch_is_a_config_error(digits_dir: Path, kind: str, name: str, msg: str) -> None:
    layer = input_layer(kind, digits_dir / name)
    layer.store_conf.shape[0] = 63
    with pytest.raises(SingaConfigError, match=msg):
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
