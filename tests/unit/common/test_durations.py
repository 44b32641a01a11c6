"""Durations as flags take them ("30s", "500ms", "2m"): one parser for every flag."""

from __future__ import annotations

import pytest

from scylla_singa.common.durations import parse_duration


@pytest.mark.parametrize("text,seconds", [("1s", 1), ("500ms", 0.5), ("2m", 120), ("1.5h", 5400), ("3", 3),
                                          ("2d", 172800), ("10secs", 10), (5, 5)],
                         ids=["s", "ms", "m", "h", "bare", "d", "secs", "number"])
def test_parse_duration(text, seconds) -> None:
    assert parse_duration(text) == seconds


def test_parse_duration_none_and_errors() -> None:
    assert parse_duration("none", allow_none=True) is None
    with pytest.raises(ValueError, match="bad duration"):
        parse_duration("1 fortnight")
    with pytest.raises(ValueError):
        parse_duration("none")
