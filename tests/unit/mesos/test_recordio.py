"""RecordIO framing: encode/decode round trips, partial feeds, bad framing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scylla_singa.mesos.api.recordio import Decoder, RecordIOError, encode, encode_json


def test_encode_frames_with_decimal_length() -> None:
    assert encode(b"hello") == b"5\nhello"
    assert encode(b"") == b"0\n"
    assert encode_json({"type": "HEARTBEAT"}) == b'20\n{"type":"HEARTBEAT"}'


@given(st.lists(st.binary(max_size=300), max_size=20), st.integers(min_value=1, max_value=50))
def test_any_split_of_the_stream_decodes_the_same_records(records: list[bytes], step: int) -> None:
    stream = b"".join(encode(r) for r in records)
    dec = Decoder()
    out: list[bytes] = []
    for i in range(0, len(stream), step):
        out += dec.feed(stream[i:i + step])
    assert out == records and dec.pending == 0


@pytest.mark.parametrize("data", [b"x\nabc", b"-1\n", b"9" * 30], ids=["not-a-number", "negative", "too-long"])
def test_bad_framing_raises(data: bytes) -> None:
    with pytest.raises(RecordIOError):
        Decoder().feed(data)


def test_oversized_record_is_refused() -> None:
    with pytest.raises(RecordIOError, match="exceeds"):
        Decoder(max_record=10).feed(b"11\n")


def test_json_events_round_trip() -> None:
    ev = {"type": "OFFERS", "offers": {"offers": [{"id": {"value": "o1"}}]}}
    assert [json.loads(r) for r in Decoder().feed(encode_json(ev) * 2)] == [ev, ev]
