"""scikit-learn's handwritten digits as SINGA input files (`scylla-singa data digits --out DIR`).

The data set is the one scikit-learn ships (1,797 8x8 grey images of the
digits 0-9, pixel values 0-16; no download). It is split once, with a fixed
seed, into 1,437 training and 360 test images and written as

    DIR/train.csv, DIR/test.csv    one record per line: label,p0,...,p63 (kCSVInput, backend "textfile")
    DIR/train.bin, DIR/test.bin    the project's record store (kRecordInput; records.py)
    DIR/meta.json                  counts, shape, classes, split seed

The split and the files are the same on every run (the image build runs
this). Host side only: it imports scikit-learn, which the image lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from scylla_singa.runtime.records import write_records

SPLIT_SEED = 0
TEST_COUNT = 360


def digits_split() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train": (X, y), "test": (X, y)} with X (N, 64) integer pixels and y (N,) labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = digits.data.astype(np.int64)
    y = digits.target.astype(np.int64)
    perm = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    test, train = perm[:TEST_COUNT], perm[TEST_COUNT:]
    return {"train": (x[train], y[train]), "test": (x[test], y[test])}


def write_digits(out: Path) -> dict:
    """Write the digits files into `out` (created if needed); returns the meta written."""
    out.mkdir(parents=True, exist_ok=True)
    meta = {"name": "digits", "source": "sklearn.datasets.load_digits", "shape": [64], "classes": 10,
            "pixel_range": [0, 16], "split_seed": SPLIT_SEED, "counts": {}}
    for split, (x, y) in digits_split().items():
        lines = [",".join(map(str, [label, *row])) for label, row in zip(y.tolist(), x.tolist())]
        tmp = out / f".{split}.csv.tmp"
        tmp.write_text("\n".join(lines) + "\n")
        tmp.replace(out / f"{split}.csv")
        write_records(out / f"{split}.bin", x.astype(np.float32), y, {"name": f"digits-{split}"})
        meta["counts"][split] = int(len(y))
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta
