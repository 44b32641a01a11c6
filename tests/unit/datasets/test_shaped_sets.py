"""The digits in SINGA's formats, read back with a RecordProto built here from SINGA 0.3.0's field facts.

An independent decoder: if the project's common.proto drifted from SINGA's,
the files would still round-trip through it, but not through this one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from scylla_singa.datasets.digits import CIFAR_SHAPED, MNIST_SHAPED, reshape_images, write_digits_set
from scylla_singa.datasets.sentences import DIGIT_WORDS, sum_sentences, write_corpus
from scylla_singa.runtime.kvfile import read_kvfile

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


def test_digits_in_mnist_and_cifar_shapes() -> None:
    digit = np.zeros((1, 64))
    digit[0, 27:29] = 16          # two bright pixels in the middle row pair
    mnist = reshape_images(digit.reshape(1, 8, 8), MNIST_SHAPED)
    assert mnist.shape == (1, 28, 28) and mnist.dtype == np.uint8
    assert mnist[0, :4].max() == 0 and mnist[0, :, :4].max() == 0      # MNIST's 4-pixel empty border
    assert 200 < mnist.max() <= 255     # 16 stretched to 255, a little blurred by the interpolation
    cifar = reshape_images(digit.reshape(1, 8, 8), CIFAR_SHAPED)
    assert cifar.shape == (1, 3, 32, 32) and (cifar[0, 0] == cifar[0, 2]).all()


def test_the_shaped_sets_decode_as_singa_records(tmp_path: Path) -> None:
    mnist = write_digits_set(tmp_path / "m", MNIST_SHAPED)
    cifar = write_digits_set(tmp_path / "c", CIFAR_SHAPED)
    assert mnist["counts"] == {"train": 1437, "test": 360} == cifar["counts"]
    key, value = read_kvfile(tmp_path / "m" / mnist["files"]["train_kvfile"])[0]
    rec = RecordProto.FromString(value)
    assert key == b"00000000" and len(rec.pixel) == 784 and 0 <= rec.label <= 9
    ((key, value),) = read_kvfile(tmp_path / "c" / cifar["files"]["mean_file"])
    mean = RecordProto.FromString(value)
    assert key == b"mean" and len(mean.data) == 3072 and 0 < np.mean(mean.data) < 255
    labels = [RecordProto.FromString(v).label for _, v in read_kvfile(tmp_path / "c" / cifar["files"]["test_kvfile"])]
    assert sorted(set(labels)) == list(range(10)) and len(labels) == 360


def test_the_rnnlm_corpus_spells_sums_of_label_pairs(tmp_path: Path) -> None:
    assert sum_sentences(np.array([3, 8, 0, 1, 9])) == ["three plus eight is one one", "zero plus one is one"]
    assert write_corpus(tmp_path) == {"train": 718, "valid": 90, "test": 90}
    vocabulary = set((tmp_path / "train.txt").read_text().split())
    assert vocabulary <= set(DIGIT_WORDS) | {"plus", "is"}
    assert len((tmp_path / "valid.txt").read_text().splitlines()) == 90
