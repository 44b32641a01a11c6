"""The digits set written in Apache SINGA 0.3's own input formats (host side).

Real SINGA's `kRecordInput` layer with `backend: "kvfile"` reads a KVFile:
a plain sequence of tuples

    <key length: size_t, 8 bytes little-endian> <key> <value length: size_t> <value>

with no header, where each value is a serialized `RecordProto`
(`repeated int32 shape = 1; optional int32 label = 2; optional bytes pixel = 3;
repeated float data = 4 [packed]`). Pixels are unsigned bytes in the record's
shape order (CHW for colour). A mean file (`store_conf.mean_file`) is a KVFile
holding one record, key "mean", whose `data` has one float per input value.

SINGA's examples expect MNIST (28x28 grey, 784 bytes) and CIFAR-10 (3x32x32)
records. No download is possible here, so scikit-learn's handwritten digits
(8x8, values 0-16; the project's fixed 1,437/360 split) are drawn in those
shapes: every image is scaled up by bilinear interpolation and its values
stretched to 0-255 — MNIST-like: the digit fills the 20x20 centre of a 28x28
frame, as MNIST's do; CIFAR-like: the digit fills the whole 32x32 frame,
the same grey in all three channels. They are still the 1,797 digits, not
MNIST or CIFAR-10: accuracies are not comparable with published ones.

SINGA's rnnlm example needs a text corpus (its own converter,
`singa-rnnlm-create-data`, turns text into its records). Here the corpus is
made of the digits' labels too: consecutive pairs of labels, in split order,
become sentences such as "three plus eight is one one" (13 words with the
end of sentence), a small language with structure to learn.

Writes are atomic (a temp file renamed into place). numpy only; the record
encoding is done here so no protobuf runtime is needed.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

SIZE_T = struct.Struct("<Q")
MNIST_SIDE, MNIST_DIGIT_SIDE = 28, 20
CIFAR_SIDE, CIFAR_CHANNELS = 32, 3


def _varint(value: int) -> bytes:
    """Protobuf base-128 varint; negative int32 values take ten bytes, as protobuf encodes them."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_record(shape: Iterable[int], label: int | None = None, pixel: bytes | None = None,
                  data: np.ndarray | None = None) -> bytes:
    """A serialized RecordProto, fields in number order as protobuf writes them."""
    out = bytearray()
    for s in shape:
        out += b"\x08" + _varint(int(s))
    if label is not None:
        out += b"\x10" + _varint(int(label))
    if pixel is not None:
        out += b"\x1a" + _varint(len(pixel)) + pixel
    if data is not None:
        packed = np.asarray(data, dtype="<f4").tobytes()
        out += b"\x22" + _varint(len(packed)) + packed
    return bytes(out)


def write_kvfile(path: Path, tuples: Iterable[tuple[bytes, bytes]]) -> int:
    """Write (key, value) tuples as a KVFile at `path`; returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    count = 0
    with tmp.open("wb") as f:
        for key, value in tuples:
            if not value:
                raise ValueError(f"{path}: KVFile values must not be empty (key {key!r})")
            f.write(SIZE_T.pack(len(key)) + key + SIZE_T.pack(len(value)) + value)
            count += 1
    tmp.replace(path)
    return count


def read_kvfile(path: Path) -> Iterator[tuple[bytes, bytes]]:
    """The (key, value) tuples of a KVFile; a truncated tail is an error naming the offset."""
    blob = path.read_bytes()
    offset = 0
    while offset < len(blob):
        fields = []
        for _ in range(2):
            if offset + SIZE_T.size > len(blob):
                raise ValueError(f"{path}: truncated KVFile at byte {offset}")
            (length,) = SIZE_T.unpack_from(blob, offset)
            offset += SIZE_T.size
            if offset + length > len(blob):
                raise ValueError(f"{path}: truncated KVFile at byte {offset}")
            fields.append(blob[offset:offset + length])
            offset += length
        yield fields[0], fields[1]


def interpolation_matrix(n_out: int, n_in: int) -> np.ndarray:
    """(n_out, n_in) bilinear weights mapping pixel centres of the output onto the input."""
    centres = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    centres = np.clip(centres, 0, n_in - 1)
    low = np.floor(centres).astype(int)
    high = np.minimum(low + 1, n_in - 1)
    frac = centres - low
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), low] += 1 - frac
    m[np.arange(n_out), high] += frac
    return m


def upscale(images: np.ndarray, side: int, value_max: float = 16.0) -> np.ndarray:
    """(N, h, w) images scaled to (N, side, side) uint8 with values stretched from 0..value_max to 0..255."""
    n, h, w = images.shape
    rows, cols = interpolation_matrix(side, h), interpolation_matrix(side, w)
    scaled = np.einsum("ij,njk,lk->nil", rows, images.astype(np.float64), cols)
    return np.clip(np.rint(scaled * 255.0 / value_max), 0, 255).astype(np.uint8)


def mnist_shaped(flat8x8: np.ndarray) -> np.ndarray:
    """(N, 64) digits -> (N, 28, 28) uint8, the digit in the 20x20 centre as in MNIST."""
    digits = upscale(flat8x8.reshape(-1, 8, 8), MNIST_DIGIT_SIDE)
    margin = (MNIST_SIDE - MNIST_DIGIT_SIDE) // 2
    out = np.zeros((len(digits), MNIST_SIDE, MNIST_SIDE), dtype=np.uint8)
    out[:, margin:margin + MNIST_DIGIT_SIDE, margin:margin + MNIST_DIGIT_SIDE] = digits
    return out


def cifar_shaped(flat8x8: np.ndarray) -> np.ndarray:
    """(N, 64) digits -> (N, 3, 32, 32) uint8 (CHW), the same grey in every channel."""
    grey = upscale(flat8x8.reshape(-1, 8, 8), CIFAR_SIDE)
    return np.repeat(grey[:, None, :, :], CIFAR_CHANNELS, axis=1)


def record_tuples(images: np.ndarray, labels: np.ndarray, key_width: int) -> Iterator[tuple[bytes, bytes]]:
    """KVFile tuples for images (N, ...) uint8 with zero-padded decimal keys, as SINGA's converters write."""
    shape = images.shape[1:]
    for i, (img, label) in enumerate(zip(images, labels.tolist())):
        yield (f"{i:0{key_width}d}".encode(), encode_record(shape, label, pixel=img.tobytes()))


def write_mnist_shaped(out: Path, splits: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, int]:
    """out/train_data.bin and out/test_data.bin, the names SINGA's MNIST confs use."""
    counts = {}
    for split, (x, y) in splits.items():
        counts[split] = write_kvfile(out / f"{split}_data.bin", record_tuples(mnist_shaped(x), y, 8))
    return counts


def write_cifar_shaped(out: Path, splits: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, int]:
    """out/train_data.bin, out/test_data.bin and out/image_mean.bin (the training mean), as SINGA's CIFAR-10 confs use."""
    counts = {}
    for split, (x, y) in splits.items():
        images = cifar_shaped(x)
        counts[split] = write_kvfile(out / f"{split}_data.bin", record_tuples(images, y, 5))
        if split == "train":
            mean = images.reshape(len(images), -1).astype(np.float64).mean(axis=0)
            write_kvfile(out / "image_mean.bin", [(b"mean", encode_record(images.shape[1:], data=mean))])
    return counts


DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def sum_sentences(labels: np.ndarray) -> list[str]:
    """One sentence per consecutive pair of labels: "<a> plus <b> is <digits of a+b>"."""
    words = [DIGIT_WORDS[int(v)] for v in labels]
    return [f"{a} plus {b} is " + " ".join(DIGIT_WORDS[int(d)] for d in str(int(x) + int(y)))
            for (a, x), (b, y) in zip(zip(words[0::2], labels[0::2]), zip(words[1::2], labels[1::2]))]


def write_corpus(out: Path, splits: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, int]:
    """out/train.txt (training labels), out/valid.txt and out/test.txt (the two halves of the test labels)."""
    test_labels = splits["test"][1]
    half = len(test_labels) // 2
    parts = {"train": splits["train"][1], "valid": test_labels[:half], "test": test_labels[half:]}
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, labels in parts.items():
        sentences = sum_sentences(labels)
        tmp = out / f".{name}.txt.tmp"
        tmp.write_text("\n".join(sentences) + "\n")
        tmp.replace(out / f"{name}.txt")
        counts[name] = len(sentences)
    return counts


def write_all(out: Path) -> dict:
    """Every derived set under `out`: mnist/, cifar10/, rnnlm/ and a meta.json saying what they are."""
    from ..runtime.data_cli import digits_split

    splits = digits_split()
    meta = {
        "source": "scikit-learn handwritten digits (8x8, 0-16), split 1437/360 with seed 0",
        "note": "digits drawn in MNIST and CIFAR-10 shapes, not MNIST or CIFAR-10",
        "mnist": {"shape": [MNIST_SIDE, MNIST_SIDE], "counts": write_mnist_shaped(out / "mnist", splits)},
        "cifar10": {"shape": [CIFAR_CHANNELS, CIFAR_SIDE, CIFAR_SIDE],
                    "counts": write_cifar_shaped(out / "cifar10", splits)},
        "rnnlm": {"sentences": write_corpus(out / "rnnlm", splits)},
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    """`python -m scylla_singa.datasets.singa_formats OUT_DIR`."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m scylla_singa.datasets.singa_formats OUT_DIR", file=sys.stderr)
        return 2
    meta = write_all(Path(args[0]))
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
