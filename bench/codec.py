"""CPU cost of one Mesos v1 message through the codec, per format and per converter.

    .venv/bin/python -m bench.codec [--size quick|full]

Why: the master must stay under ~0.5 ms of CPU per task for the paper's
50,000 agents, about 15 messages per task (issue 17), so the codec's cost
per message decides how it may be used. Measured per message kind (the
calls and events of one task's life: ACCEPT with a Docker TaskInfo,
ACKNOWLEDGE, an OFFERS event, an UPDATE event, SUBSCRIBED) and per way:

- json.loads / json.dumps alone: what the master does today;
- decode_call JSON: json.loads, then Mesos's JSON rules through the Call message
  and back to a dict (what validates every field);
- decode_call protobuf: ParseFromString and our to_dict;
- encode protobuf: our from_dict and SerializeToString;
- google.protobuf.json_format (ParseDict / MessageToDict with
  preserving_proto_field_name) for comparison.

Events come from tests/fixtures/apache_mesos_protobuf/ (recorded from a real
Mesos 1.12 master); the calls are built here. CPU time (process_time) per
message, best of 5 rounds.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import SCHEDULER, MediaType
from scylla_singa.mesos.api.proto import scheduler_pb2

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "apache_mesos_protobuf"
ROUNDS = {"quick": 2000, "full": 20000}


def accept_call() -> dict[str, Any]:
    """An ACCEPT launching one SINGA process the way our framework builds it (Docker on the job's overlay)."""
    def scalar(name: str, value: float) -> dict[str, Any]:
        return {"name": name, "type": "SCALAR", "scalar": {"value": value}, "role": "*",
                "allocation_info": {"role": "*"}}

    task = {"name": "digits-mlp-3c162b proc 0", "task_id": {"value": "digits-mlp-3c162b.proc-0.a0"},
            "agent_id": {"value": "c3ca37d3-5d1e-4a39-9c8e-8f1f0a1d2b3c-S12"},
            "resources": [scalar("cpus", 1.0), scalar("mem", 160.0), scalar("net_bw", 2.5)],
            "command": {"value": "exec singa -conf ./job.conf -procs_id 0 -cluster ./cluster.json -workspace /ws",
                        "shell": True,
                        "environment": {"variables": [{"name": n, "value": v} for n, v in (
                            ("SCYLLA_JOB_ID", "digits-mlp-3c162b"), ("SCYLLA_PROC_ID", "0"),
                            ("MESOS_TASK_ID", "digits-mlp-3c162b.proc-0.a0"),
                            ("SCYLLA_PROGRESS_URL", "http://192.0.2.2:34019/progress"))]}},
            "container": {"type": "DOCKER",
                          "docker": {"image": "singa:latest", "network": "USER",
                                     "parameters": [{"key": "network-alias", "value": "digits-mlp-3c162b-proc-0"},
                                                    {"key": "label", "value": "scylla.job=digits-mlp-3c162b"}]},
                          "network_infos": [{"name": "scylla-digits-mlp-3c162b"}],
                          "volumes": [{"container_path": "/mnt/mesos/sandbox/job.conf", "mode": "RO",
                                       "host_path": "/var/lib/scylla-singa/jobs/digits-mlp-3c162b/job.conf"},
                                      {"container_path": "/ws", "mode": "RW",
                                       "host_path": "/var/lib/scylla-singa/jobs/digits-mlp-3c162b/workspace"}],
                          "hostname": "digits-mlp-3c162b-proc-0"},
            "kill_policy": {"grace_period": {"nanoseconds": 10_000_000_000}},
            "labels": {"labels": [{"key": "scylla.job", "value": "digits-mlp-3c162b"}]}}
    return {"type": "ACCEPT", "framework_id": {"value": "c3ca37d3-5d1e-4a39-9c8e-8f1f0a1d2b3c-0002"},
            "accept": {"offer_ids": [{"value": "c3ca37d3-5d1e-4a39-9c8e-8f1f0a1d2b3c-O42"}],
                       "operations": [{"type": "LAUNCH", "launch": {"task_infos": [task]}}],
                       "filters": {"refuse_seconds": 5.0}}}


def acknowledge_call() -> dict[str, Any]:
    return {"type": "ACKNOWLEDGE", "framework_id": {"value": "c3ca37d3-5d1e-4a39-9c8e-8f1f0a1d2b3c-0002"},
            "acknowledge": {"agent_id": {"value": "c3ca37d3-5d1e-4a39-9c8e-8f1f0a1d2b3c-S12"},
                            "task_id": {"value": "digits-mlp-3c162b.proc-0.a0"},
                            "uuid": "Vo099ue3SSOJ72cdJfQF1Q=="}}


def recorded_event(name: str) -> dict[str, Any]:
    event = scheduler_pb2.Event()
    event.ParseFromString((FIXTURES / f"scheduler-{name}.pb").read_bytes())
    return codec.to_dict(event)


def cpu_us(fn: Callable[[], Any], n: int) -> float:
    """CPU microseconds per call of `fn`, best of 5 rounds of n calls."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(n):
            fn()
        best = min(best, time.process_time() - start)
    return best / n * 1e6


def measure_call(name: str, call: dict[str, Any], n: int) -> dict[str, Any]:
    as_json = json.dumps(call).encode()
    as_pb = codec.from_dict(SCHEDULER.call(), call).SerializeToString()

    def json_format_decode() -> dict[str, Any]:
        message = SCHEDULER.call()
        message.ParseFromString(as_pb)
        return json_format.MessageToDict(message, preserving_proto_field_name=True)

    return {"message": name, "json_bytes": len(as_json), "protobuf_bytes": len(as_pb), "us": {
        "json.loads": cpu_us(lambda: json.loads(as_json), n),
        "decode_call json (validated)": cpu_us(lambda: codec.decode_call(SCHEDULER, as_json, MediaType.JSON), n),
        "decode_call protobuf": cpu_us(lambda: codec.decode_call(SCHEDULER, as_pb, MediaType.PROTOBUF), n),
        "protobuf parse only": cpu_us(lambda: SCHEDULER.call().ParseFromString(as_pb), n),
        "json_format parse+MessageToDict": cpu_us(json_format_decode, n),
    }}


def measure_event(name: str, event: dict[str, Any], n: int) -> dict[str, Any]:
    as_json = codec.encode_event(SCHEDULER, event, MediaType.JSON)
    as_pb = codec.encode_event(SCHEDULER, event, MediaType.PROTOBUF)

    def json_format_encode() -> bytes:
        return json_format.ParseDict(event, SCHEDULER.event()).SerializeToString()

    return {"message": name, "json_bytes": len(as_json), "protobuf_bytes": len(as_pb), "us": {
        "json.dumps (encode_event json)": cpu_us(lambda: codec.encode_event(SCHEDULER, event, MediaType.JSON), n),
        "encode_event protobuf": cpu_us(lambda: codec.encode_event(SCHEDULER, event, MediaType.PROTOBUF), n),
        "json_format ParseDict+serialize": cpu_us(json_format_encode, n),
    }}


def run(size: str = "quick") -> dict[str, Any]:
    n = ROUNDS[size]
    calls = [measure_call("ACCEPT (1 Docker task)", accept_call(), n),
             measure_call("ACKNOWLEDGE", acknowledge_call(), n)]
    events = [measure_event(name, recorded_event(kind), n) for name, kind in (
        ("OFFERS (1 offer, 4 resources)", "OFFERS"), ("UPDATE TASK_RUNNING", "UPDATE-TASK_RUNNING"),
        ("SUBSCRIBED", "SUBSCRIBED"), ("HEARTBEAT", "HEARTBEAT"))]
    return {"rounds": n, "calls": calls, "events": events}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=tuple(ROUNDS), default="quick")
    data = run(parser.parse_args().size)
    for row in data["calls"] + data["events"]:
        print(f"{row['message']}: {row['json_bytes']} B JSON, {row['protobuf_bytes']} B protobuf")
        for way, us in row["us"].items():
            print(f"    {way:36s} {us:8.1f} us")


if __name__ == "__main__":
    main()
