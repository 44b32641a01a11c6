"""mesos_exporter (github.com/mesos/mesos_exporter v1.1.2) would decode our master's and agent's answers.

The exporter could not be installed here (the Go module proxy answers 403
for every version; README). So this test holds, in our own words, the
types its source declares for what it reads, and decodes our answers with
the rules of Go's encoding/json: object keys match field names without
regard to case, unknown keys are ignored, `null` leaves a field at its zero
value, and any other JSON type than the field's is a decode error (which
makes the exporter drop the whole scrape). Resource `ports` go through the
exporter's own range parser ("[b-e, b-e]", quotes and brackets trimmed).

What it reads (facts from its source): master `GET /state` (agents' pid,
resources, used and unreserved resources, attributes; frameworks' active
flag and their tasks and completed tasks with labels as an array of
{key, value} and statuses {state, timestamp}) and `GET /metrics/snapshot`
(string -> number); agent `GET /slave(1)/state` (attributes, frameworks ->
executors {id, name, source, tasks}), `GET /monitor/statistics` (executors
with their ResourceStatistics numbers) and `GET /metrics/snapshot`.
"""

from __future__ import annotations

from typing import Any

import requests

from tests.support.mesos_framework import TestFramework, task_info

STRING, NUMBER, BOOL, ANY, RANGES = "string", "number", "bool", "any", "ranges"
RESOURCES = {"cpus": NUMBER, "disk": NUMBER, "mem": NUMBER, "ports": RANGES}
TASK = {"name": STRING, "id": STRING, "executor_id": STRING, "framework_id": STRING, "slave_id": STRING,
        "state": STRING, "labels": [{"key": STRING, "value": STRING}], "resources": RESOURCES,
        "statuses": [{"state": STRING, "timestamp": NUMBER}]}
MASTER_STATE = {"slaves": [{"pid": STRING, "used_resources": RESOURCES, "unreserved_resources": RESOURCES,
                            "resources": RESOURCES, "attributes": {"*": ANY}, "active": BOOL}],
                "frameworks": [{"active": BOOL, "tasks": [TASK], "completed_tasks": [TASK]}]}
AGENT_STATE = {"attributes": {"*": ANY},
               "frameworks": [{"ID": STRING, "executors": [{"id": STRING, "name": STRING, "source": STRING,
                                                            "tasks": [TASK]}]}]}
STATISTICS = {key: NUMBER for key in (
    "processes", "threads", "cpus_limit", "cpus_system_time_secs", "cpus_user_time_secs",
    "cpus_throttled_time_secs", "cpus_nr_periods", "cpus_nr_throttled", "mem_anon_bytes", "mem_limit_bytes",
    "mem_rss_bytes", "mem_total_bytes", "mem_cache_bytes", "mem_swap_bytes", "mem_file_bytes",
    "mem_mapped_file_bytes", "mem_unevictable_bytes", "mem_low_pressure_counter", "mem_medium_pressure_counter",
    "mem_critical_pressure_counter", "disk_limit_bytes", "disk_used_bytes", "net_rx_bytes", "net_rx_dropped",
    "net_rx_errors", "net_rx_packets", "net_tx_bytes", "net_tx_dropped", "net_tx_errors", "net_tx_packets")}
MONITOR = [{"executor_id": STRING, "executor_name": STRING, "framework_id": STRING, "source": STRING,
            "statistics": STATISTICS, "tasks": [TASK]}]
METRICS = {"*": NUMBER}


def go_decode_errors(value: Any, schema: Any, path: str = "") -> list[str]:
    """Where Go's encoding/json would fail to put `value` into the declared type `schema`."""
    if value is None:
        return []
    if schema == ANY:
        return []
    if schema == STRING:
        return [] if isinstance(value, str) else [f"{path}: {value!r} is not a string"]
    if schema == BOOL:
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a bool"]
    if schema == NUMBER:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not a number"]
    if schema == RANGES:
        return _ranges_errors(value, path)
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: a JSON {type(value).__name__} where an array is declared"]
        return [e for i, item in enumerate(value) for e in go_decode_errors(item, schema[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return [f"{path}: a JSON {type(value).__name__} where an object is declared"]
    if "*" in schema:
        return [e for k, v in value.items() for e in go_decode_errors(v, schema["*"], f"{path}/{k}")]
    by_lower = {k.lower(): k for k in value}
    return [e for field, kind in schema.items() if field.lower() in by_lower
            for e in go_decode_errors(value[by_lower[field.lower()]], kind, f"{path}/{field}")]


def _ranges_errors(value: Any, path: str) -> list[str]:
    if not isinstance(value, str):
        return [f"{path}: {value!r} is not the ranges text the exporter parses"]
    text = value.strip('[]"')
    for part in filter(None, text.split(",")):
        begin, sep, end = part.partition("-")
        if not sep or not begin.strip().isdigit() or not end.strip().isdigit():
            return [f"{path}: bad range {part!r}"]
    return []


def test_go_rules_catch_what_broke_the_exporter_before() -> None:
    """The checker fails on the shape issue 15 found (task labels as an object), so a pass means something."""
    old_task = {"id": "t", "labels": {"labels": [{"key": "a", "value": "b"}]}, "resources": {"cpus": 1.0}}
    assert go_decode_errors({"frameworks": [{"tasks": [old_task]}]}, MASTER_STATE) == [
        "/frameworks[0]/tasks[0]/labels: a JSON dict where an array is declared"]
    assert go_decode_errors({"slaves": [{"resources": {"ports": "[31000-32000, 33000-34000]"}}]}, MASTER_STATE) == []


def test_the_exporter_would_decode_our_master_and_agent(cluster) -> None:
    m = cluster([{"resources": "cpus:2;mem:2048;disk:1024;ports:[31000-32000]", "attributes": "rack:r1;speed:2"}],
                simulate=False, use_docker=False)
    f = TestFramework(m.master_address, name="exporter").start()
    try:
        offer = f.take_offer()
        labels = {"labels": {"labels": [{"key": "app", "value": "exporter"}]}}
        running = task_info(offer["agent_id"], command="sleep 600", extra=labels)
        done = task_info(offer["agent_id"], command="exit 0", extra=labels)
        f.launch(offer, [running, done])
        f.wait_state(running["task_id"]["value"], "TASK_RUNNING")
        f.wait_state(done["task_id"]["value"], "TASK_FINISHED")
        master, agent = f"http://{m.master_address}", f"http://{m.agent_addresses[0]}"
        reads = [(f"{master}/state", MASTER_STATE), (f"{master}/metrics/snapshot", METRICS),
                 (f"{agent}/slave(1)/state", AGENT_STATE), (f"{agent}/monitor/statistics", MONITOR),
                 (f"{agent}/metrics/snapshot", METRICS)]
        for url, schema in reads:
            answer = requests.get(url, timeout=10)
            assert answer.status_code == 200, url
            assert go_decode_errors(answer.json(), schema) == [], url
        state = requests.get(f"{master}/state", timeout=10).json()
        (task,) = state["frameworks"][0]["tasks"]
        assert task["labels"] == [{"key": "app", "value": "exporter"}]
        (executor,) = requests.get(f"{agent}/monitor/statistics", timeout=10).json()
        assert executor["executor_id"] == running["task_id"]["value"]
        assert executor["statistics"]["mem_rss_bytes"] > 0   # the running process, read from /proc
    finally:
        f.stop()
