"""SINGA's KVFile and RecordProto as written here, read back with protobuf's own decoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from scylla_singa.datasets import singa_formats as sf

F = descriptor_pb2.FieldDescriptorProto


def record_class():
    """RecordProto as SINGA 0.3.0's common.proto declares it (field names, numbers, types)."""
    fdp = descriptor_pb2.FileDescriptorProto(name="scylla_test_record.proto", package="scyllatest", syntax="proto2")
    m = fdp.message_type.add(name="RecordProto")
    m.field.add(name="shape", number=1, type=F.TYPE_INT32, label=F.LABEL_REPEATED)
    m.field.add(name="label", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    m.field.add(name="pixel", number=3, type=F.TYPE_BYTES, label=F.LABEL_OPTIONAL)
    data = m.field.add(name="data", number=4, type=F.TYPE_FLOAT, label=F.LABEL_REPEATED)
    data.options.packed = True
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("scyllatest.RecordProto"))


RecordProto = record_class()


@pytest.mark.parametrize("shape, label, pixel, data", [
    ((28, 28), 7, bytes(range(256)) * 3 + bytes(16), None),
    ((3, 32, 32), None, None, np.linspace(0, 255, 3072)),
    ((784,), -1, b"\x01", None),
])
def test_records_decode_with_protobuf(shape, label, pixel, data) -> None:
    decoded = RecordProto.FromString(sf.encode_record(shape, label, pixel, data))
    assert list(decoded.shape) == list(shape)
    assert decoded.HasField("label") == (label is not None) and (label is None or decoded.label == label)
    assert decoded.pixel == (pixel or b"")
    if data is not None:
        np.testing.assert_allclose(list(decoded.data), data.astype(np.float32))


def test_kvfile_round_trip_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "d.bin"
    assert sf.write_kvfile(path, [(b"00000", b"abc"), (b"00001", b"\x00" * 300)]) == 2
    assert list(sf.read_kvfile(path)) == [(b"00000", b"abc"), (b"00001", b"\x00" * 300)]
    assert path.read_bytes()[:8] == (5).to_bytes(8, "little")   # size_t key length, no header
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match="truncated KVFile"):
        list(sf.read_kvfile(path))
    with pytest.raises(ValueError, match="must not be empty"):
        sf.write_kvfile(tmp_path / "e.bin", [(b"k", b"")])


def test_digits_in_mnist_and_cifar_shapes() -> None:
    digit = np.zeros((1, 64))
    digit[0, 27:29] = 16          # two bright pixels in the middle row pair
    mnist = sf.mnist_shaped(digit)
    assert mnist.shape == (1, 28, 28) and mnist.dtype == np.uint8
    assert mnist[0, :4].max() == 0 and mnist[0, :, :4].max() == 0      # MNIST's 4-pixel empty border
    assert 200 < mnist.max() <= 255     # 16 stretched to 255, a little blurred by the interpolation
    cifar = sf.cifar_shaped(digit)
    assert cifar.shape == (1, 3, 32, 32) and (cifar[0, 0] == cifar[0, 2]).all()


def test_the_written_sets(tmp_path: Path) -> None:
    meta = sf.write_all(tmp_path)
    assert meta["mnist"]["counts"] == {"train": 1437, "test": 360} == meta["cifar10"]["counts"]
    assert meta["rnnlm"]["sentences"] == {"train": 718, "valid": 90, "test": 90}
    first = dict(sf.read_kvfile(tmp_path / "mnist" / "train_data.bin"))
    rec = RecordProto.FromString(first[b"00000000"])
    assert list(rec.shape) == [28, 28] and len(rec.pixel) == 784 and 0 <= rec.label <= 9
    ((key, value),) = list(sf.read_kvfile(tmp_path / "cifar10" / "image_mean.bin"))
    mean = RecordProto.FromString(value)
    assert key == b"mean" and len(mean.data) == 3072 and 0 < np.mean(mean.data) < 255
    labels = [RecordProto.FromString(v).label for _, v in sf.read_kvfile(tmp_path / "cifar10" / "test_data.bin")]
    assert sorted(set(labels)) == list(range(10)) and len(labels) == 360


def test_the_rnnlm_corpus_spells_sums_of_label_pairs(tmp_path: Path) -> None:
    assert sf.sum_sentences(np.array([3, 8, 0, 1, 9])) == ["three plus eight is one one", "zero plus one is one"]
    counts = sf.write_corpus(tmp_path, {"train": (None, np.arange(10)), "test": (None, np.array([1, 2, 3, 4]))})
    assert counts == {"train": 5, "valid": 1, "test": 1}
    assert (tmp_path / "valid.txt").read_text() == "one plus two is three\n"
    vocabulary = set((tmp_path / "train.txt").read_text().split())
    assert vocabulary <= set(sf.DIGIT_WORDS) | {"plus", "is"}
