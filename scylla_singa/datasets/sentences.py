"""A small text corpus for SINGA's rnnlm example, made from the digits' labels (host side, no download).

SINGA's rnnlm example wants a word corpus split into train/valid/test text
files, which its own create_data program turns into records. No corpus can be
downloaded here, so one is derived from the same digits split every other data
set uses: each consecutive pair of labels becomes a sentence such as
"three plus four is seven". The language is tiny and regular, so perplexity
falls quickly: it shows the model trains, not how good it is on English.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scylla_singa.common.files import write_text_atomic

from .digits import digits_split

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def sum_sentences(labels: np.ndarray) -> list[str]:
    """One sentence per consecutive pair of labels: "<a> plus <b> is <digits of a+b>"."""
    values = [int(v) for v in labels]
    return [f"{DIGIT_WORDS[a]} plus {DIGIT_WORDS[b]} is " + " ".join(DIGIT_WORDS[int(d)] for d in str(a + b))
            for a, b in zip(values[0::2], values[1::2])]


def write_corpus(out: Path) -> dict[str, int]:
    """out/train.txt (training labels), out/valid.txt and out/test.txt (the two halves of the test labels)."""
    splits = digits_split()
    test_labels = splits["test"][1]
    half = len(test_labels) // 2
    parts = {"train": splits["train"][1], "valid": test_labels[:half], "test": test_labels[half:]}
    counts = {}
    for name, labels in parts.items():
        sentences = sum_sentences(labels)
        write_text_atomic(out / f"{name}.txt", "\n".join(sentences) + "\n")
        counts[name] = len(sentences)
    return counts
