"""The codec benchmark times real messages, and each way it times gives the same message back.

Its figures decided which codec paths the master uses (issue 17); they only
say that if the ACCEPT it builds is one the master accepts, the events are
the recorded Mesos ones, and the JSON and protobuf ways decode to the same
thing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench import codec as codec_bench
from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import SCHEDULER, MediaType
from scylla_singa.mesos.api.proto import scheduler_pb2

CALLS = {"ACCEPT": codec_bench.accept_call, "ACKNOWLEDGE": codec_bench.acknowledge_call}
EVENTS = ("OFFERS", "UPDATE-TASK_RUNNING", "SUBSCRIBED", "HEARTBEAT")


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_benchmarked_call_decodes_the_same_from_json_and_from_protobuf(name: str) -> None:
    call = CALLS[name]()
    as_json = json.dumps(call).encode()
    as_pb = codec.from_dict(SCHEDULER.call(), call).SerializeToString()
    from_json = codec.decode_call(SCHEDULER, as_json, MediaType.JSON)
    from_pb = codec.decode_call(SCHEDULER, as_pb, MediaType.PROTOBUF)
    assert from_json == from_pb
    assert from_json["type"] == name


@pytest.mark.parametrize("kind", EVENTS)
def test_a_recorded_event_survives_both_encodings(kind: str) -> None:
    event = codec_bench.recorded_event(kind)
    assert event["type"] == kind.split("-")[0]
    parsed = scheduler_pb2.Event()
    parsed.ParseFromString(codec.encode_event(SCHEDULER, event, MediaType.PROTOBUF))
    assert codec.to_dict(parsed) == event
    assert json.loads(codec.encode_event(SCHEDULER, event, MediaType.JSON)) == event


def test_each_row_names_its_sizes_and_a_cost_for_every_way() -> None:
    rows: list[dict[str, Any]] = [codec_bench.measure_call("ACKNOWLEDGE", codec_bench.acknowledge_call(), 3),
                                  codec_bench.measure_event("HEARTBEAT", codec_bench.recorded_event("HEARTBEAT"), 3)]
    for row in rows:
        assert row["json_bytes"] > 0 and row["protobuf_bytes"] > 0
        assert row["us"] and all(us >= 0 for us in row["us"].values())
    assert set(rows[0]["us"]) >= {"json.loads", "decode_call json (validated)", "decode_call protobuf"}
    assert set(rows[1]["us"]) >= {"json.dumps (encode_event json)", "encode_event protobuf"}
