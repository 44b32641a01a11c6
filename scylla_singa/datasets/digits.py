"""scikit-learn's handwritten digits, written as SINGA's input files in three shapes (host side only).

The source is always the same small data set that scikit-learn ships
(1,797 8x8 grey images of the digits 0-9, pixel values 0-16; no download),
split once with a fixed seed into 1,437 training and 360 test images. It is
written in SINGA 0.3's own formats: a KVFile of RecordProto records (shape,
pixel bytes, label; keys are zero-padded indices), exactly as SINGA's
examples' create_data programs write MNIST and CIFAR-10, and CSV lines
`label,v1,...,vN` for kCSVInput. Three shapes:

    digits        8x8 grey, values 0-16 as they come           (train.bin, test.bin, train.csv, test.csv)
    mnist-shaped  28x28 grey, 0-255: each digit scaled to 20x20 and centred with a 4-pixel border, as MNIST
                  frames its digits; for SINGA's mnist confs (shape 784, or 1x28x28)
    cifar-shaped  3x32x32, 0-255, channels first as CIFAR-10's files: each digit scaled to 32x32, the same
                  grey in all three channels, plus the per-pixel mean of the training set (the mean file
                  SINGA's cifar10 confs name); for SINGA's cifar10 confs (shape 3, 32, 32)

They are the digits, honestly: the file names say so (digits-as-mnist-*,
digits-as-cifar-*), and a JSON file next to them says where they come from.
Scaling is bilinear, so the shapes carry no more information than the 8x8
originals. scikit-learn is imported here only; the runtime never imports
this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scylla_singa.common.files import write_json_atomic, write_text_atomic
from scylla_singa.runtime.records import write_image_records, write_mean_record

SPLIT_SEED = 0
TEST_COUNT = 360
SOURCE_MAX = 16  # scikit-learn's digits are 0..16
RECORD_FORMAT = "SINGA KVFile of RecordProto (shape, pixel, label)"


@dataclass(frozen=True)
class DigitsSet:
    """One variant of the digits: how its images are made from the 8x8 originals, and what its files are called."""

    name: str
    prefix: str           # file names: <prefix>train.bin, <prefix>test.csv, ...
    meta_file: str
    side: int             # the image is side x side
    digit_side: int       # the digit is scaled to digit_side x digit_side and centred
    channels: int         # 0: no channel axis (8x8, 28x28); 3: channels first
    mean_file: str | None
    key_digits: int       # zero-padded keys, as SINGA's converters write them


DIGITS = DigitsSet("digits", "", "meta.json", 8, 8, 0, None, 8)
MNIST_SHAPED = DigitsSet("mnist-shaped", "digits-as-mnist-", "digits-as-mnist.json", 28, 20, 0, None, 8)
CIFAR_SHAPED = DigitsSet("cifar-shaped", "digits-as-cifar-", "digits-as-cifar.json", 32, 32, 3,
                     "digits-as-cifar-mean.bin", 5)
SHAPES = {s.name: s for s in (DIGITS, MNIST_SHAPED, CIFAR_SHAPED)}


def digits_split() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train": (X, y), "test": (X, y)}: X (N, 8, 8) integer pixels 0-16, y (N,) labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = digits.images.astype(np.int64)
    y = digits.target.astype(np.int64)
    perm = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    test, train = perm[:TEST_COUNT], perm[TEST_COUNT:]
    return {"train": (x[train], y[train]), "test": (x[test], y[test])}


def resize_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) bilinear interpolation weights, pixel centres aligned, edges clamped."""
    centres = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
    lo = np.clip(np.floor(centres).astype(int), 0, n_in - 1)
    hi = np.clip(lo + 1, 0, n_in - 1)
    frac = np.clip(centres - lo, 0.0, 1.0)
    weights = np.zeros((n_out, n_in))
    weights[np.arange(n_out), lo] += 1.0 - frac
    weights[np.arange(n_out), hi] += frac
    return weights


def reshape_images(images: np.ndarray, variant: DigitsSet) -> np.ndarray:
    """(N, 8, 8) digits 0-16 -> the variant's images as they are stored: uint8 (N, [C,] side, side)."""
    if variant is DIGITS:
        return images.astype(np.uint8)
    r = resize_matrix(images.shape[-1], variant.digit_side)
    scaled = np.einsum("ij,njk,lk->nil", r, images.astype(np.float64), r) * (255.0 / SOURCE_MAX)
    border = (variant.side - variant.digit_side) // 2
    framed = np.zeros((len(images), variant.side, variant.side))
    framed[:, border:border + variant.digit_side, border:border + variant.digit_side] = scaled
    pixels = np.clip(np.rint(framed), 0, 255).astype(np.uint8)
    if variant.channels:
        pixels = np.repeat(pixels[:, None], variant.channels, axis=1)
    return pixels


def write_csv(path: Path, images: np.ndarray, labels: np.ndarray) -> None:
    """One `label,v1,...,vN` line per image, as SINGA's kCSVInput reads them; atomically."""
    flat = images.reshape(len(images), -1)
    lines = [",".join(map(str, [label, *row])) for label, row in zip(labels.tolist(), flat.tolist())]
    write_text_atomic(path, "\n".join(lines) + "\n")


def write_digits_set(out: Path, variant: DigitsSet) -> dict:
    """Write one variant's files into `out` (created if needed); returns the description written next to them."""
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    counts: dict[str, int] = {}
    stored: tuple[int, ...] = ()
    for split, (x, y) in digits_split().items():
        pixels = reshape_images(x, variant)
        stored = pixels.shape[1:]
        write_image_records(out / f"{variant.prefix}{split}.bin", pixels, y, variant.key_digits)
        write_csv(out / f"{variant.prefix}{split}.csv", pixels, y)
        files[f"{split}_kvfile"], files[f"{split}_csv"] = f"{variant.prefix}{split}.bin", f"{variant.prefix}{split}.csv"
        counts[split] = int(len(y))
        if split == "train" and variant.mean_file:
            write_mean_record(out / variant.mean_file, pixels.astype(np.float64).mean(axis=0))
            files["mean_file"] = variant.mean_file
    meta = {"name": variant.name, "source": "sklearn.datasets.load_digits (8x8 handwritten digits, 10 classes)",
            "derived": variant is not DIGITS, "shape": list(stored), "values": int(np.prod(stored)),
            "pixel_range": [0, SOURCE_MAX if variant is DIGITS else 255], "classes": 10, "split_seed": SPLIT_SEED,
            "counts": counts, "record_format": RECORD_FORMAT, "files": files}
    write_json_atomic(out / variant.meta_file, meta, indent=2)
    return meta


def write_digits(out: Path) -> dict:
    """The 8x8 digits as train/test .bin (KVFile) and .csv files plus meta.json."""
    return write_digits_set(out, DIGITS)
