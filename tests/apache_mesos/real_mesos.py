"""A real Apache Mesos master/agent for tests, and a small v1 HTTP client in either format.

Why here: the .proto files and the codec are only right if a real Mesos
reads what we encode and we read what it writes. The install comes from
MESOS_HOME (the directory holding bin/mesos-master; `tools/ensure_mesos.sh`
prints it); without it the tests fail with that reason instead of skipping
silently. The daemons are started by the project's one starter of real
Mesos, scylla_singa.cluster.apache_mesos (free ports, their own work dirs,
stopped by pid, every agent with `--docker_kill_orphans=false`); the agent
here has the Mesos containerizer only: it never touches the Docker engine.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.protobuf.message import Message

from scylla_singa.cluster import apache_mesos as am
from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api import recordio
from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import Api, MediaType

HEALTH_DEADLINE_S = 30.0
MesosProcess = am.MesosDaemon


def mesos_home() -> Path | None:
    """MESOS_HOME when it holds a runnable Mesos, else None."""
    home = os.environ.get("MESOS_HOME")
    if home and (Path(home) / "bin" / "mesos-master").is_file():
        return Path(home)
    return None


MISSING_MESOS = ("Apache Mesos is not installed for this test: set MESOS_HOME to the directory holding "
                 "bin/mesos-master (MESOS_HOME=$(tools/ensure_mesos.sh) installs Mesos 1.12 and prints it)")


def start_master(home: Path, work: Path) -> am.MesosDaemon:
    """A real mesos-master on 127.0.0.1 with an in-memory registry, leading on return.

    /health answers before the master has elected itself, and until then the scheduler API answers 503
    "No leader elected": wait for `master/elected` as well."""
    port = am.free_port()
    argv = am.master_argv(am.MesosInstall(home), "127.0.0.1", port, str(work / "master"), str(work / "master-logs"))
    daemon = am.start("mesos-master", argv, str(work / "master.log"), f"127.0.0.1:{port}",
                      timeout_s=HEALTH_DEADLINE_S)
    try:
        wait_until(lambda: am.is_leader(daemon.address), HEALTH_DEADLINE_S, "the real master to elect itself")
    except BaseException:
        daemon.stop()
        raise
    return daemon


def start_agent(home: Path, work: Path, master: str, resources: str = "cpus:2;mem:1024;disk:1024;ports:[31000-31100]",
                attributes: str = "rack:r1") -> am.MesosDaemon:
    """A real mesos-agent running tasks as plain commands (the Mesos containerizer only: it never
    touches the Docker engine), healthy on return."""
    port = am.free_port()
    argv = am.agent_argv(am.MesosInstall(home), master, "127.0.0.1", port, "127.0.0.1", str(work / "agent"),
                         resources, docker_socket=None, attributes=attributes)
    return am.start("mesos-agent", argv, str(work / "agent.log"), f"127.0.0.1:{port}", timeout_s=HEALTH_DEADLINE_S)


# ---- HTTP -------------------------------------------------------------------

def post(address: str, path: str, body: bytes, headers: dict[str, str] | None = None, method: str = "POST",
         timeout: float = 10.0) -> tuple[int, dict[str, str], bytes]:
    """One request; (status, headers, body)."""
    host, port = address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request(method, path, body, headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def encode_call(api: Api, call: dict[str, Any], media_type: MediaType) -> bytes:
    """A Call (dict form) as a request body; the protobuf one goes through our pb2 messages."""
    if media_type is MediaType.JSON:
        return json.dumps(call).encode()
    return codec.from_dict(api.call(), call, strict=True).SerializeToString()


def operator_call(address: str, api: Api, call: dict[str, Any], media_type: MediaType) -> tuple[Message, bytes]:
    """POST /api/v1 with `call` in `media_type`, answered in the same; (decoded Response, raw body)."""
    status, headers, body = post(address, "/api/v1", encode_call(api, call, media_type),
                                 {"Content-Type": media_type, "Accept": media_type})
    assert status == 200, f"{call['type']} answered {status}: {body[:300]!r}"
    assert headers.get("Content-Type") == media_type, headers
    response = api.response()
    if media_type is MediaType.PROTOBUF:
        response.ParseFromString(body)
    else:
        codec.from_dict(response, json.loads(body))
    return response, body


class EventStream:
    """A SUBSCRIBE stream (scheduler or operator) read by a thread into a queue of raw records."""

    def __init__(self, address: str, path: str, api: Api, call: dict[str, Any], media_type: MediaType) -> None:
        host, port = address.rsplit(":", 1)
        self.api = api
        self.media_type = media_type
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        self.conn.request("POST", path, encode_call(api, call, media_type),
                          {"Content-Type": media_type, "Accept": media_type})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.headers = dict(self.response.getheaders())
        self.stream_id = self.headers.get("Mesos-Stream-Id")
        self.records: queue.Queue[bytes | None] = queue.Queue()
        self.backlog: list[tuple[Message, bytes]] = []
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        decoder = recordio.Decoder()
        try:
            while chunk := self.response.read1(65536):
                for record in decoder.feed(chunk):
                    self.records.put(record)
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # closed by close(): http.client drops its file object under the reader
        self.records.put(None)

    def next_record(self, timeout: float = 30.0) -> bytes:
        try:
            record = self.records.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no event within {timeout}s") from None
        if record is None:
            raise AssertionError("event stream ended")
        return record

    def decode(self, record: bytes) -> Message:
        event = self.api.event()
        if self.media_type is MediaType.PROTOBUF:
            event.ParseFromString(record)
        else:
            codec.from_dict(event, json.loads(record))
        return event

    def next_of(self, kind: str, timeout: float = 30.0) -> tuple[Message, bytes]:
        """The first event of type `kind` not yet taken, and its raw record; events of other types
        stay queued for later calls (Mesos may send OFFERS before the first HEARTBEAT)."""
        for i, (event, record) in enumerate(self.backlog):
            if self._kind(event) == kind:
                del self.backlog[i]
                return event, record
        end = time.monotonic() + timeout
        while True:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {kind} event within {timeout}s (held: "
                                     f"{[self._kind(e) for e, _ in self.backlog]})")
            record = self.next_record(remaining)
            event = self.decode(record)
            if self._kind(event) == kind:
                return event, record
            self.backlog.append((event, record))

    def _kind(self, event: Message) -> str:
        return event.DESCRIPTOR.enum_types_by_name["Type"].values_by_number[event.type].name

    def close(self) -> None:
        self.conn.close()


def unknown_fields(message: Message, path: str = "") -> Iterator[str]:
    """Paths of fields a message carried that our .proto files do not declare (should be none)."""
    from google.protobuf.unknown_fields import UnknownFieldSet

    for item in UnknownFieldSet(message):
        yield f"{path or message.DESCRIPTOR.full_name}#{item.field_number}"
    for fd, value in message.ListFields():
        if fd.type != fd.TYPE_MESSAGE:
            continue
        if fd.message_type.GetOptions().map_entry:
            values = list(value.values()) if fd.message_type.fields_by_name["value"].message_type else []
        elif fd.is_repeated:
            values = list(value)
        else:
            values = [value]
        for child in values:
            yield from unknown_fields(child, f"{path}.{fd.name}")


# Mesos's master fills v1 AgentInfo from its internal (v0) SlaveInfo, whose `checkpoint` (field 7)
# the v1 AgentInfo does not declare: it arrives as an unknown field and appears in the JSON.
AGENT_INFO_LEFTOVER = "agent_info#7"


def mesos_json_without_quirks(value: Any) -> Any:
    """Mesos's JSON minus what its hand-written operator writers add beyond its protobuf JSON rules:
    repeated fields written even when empty, and AgentInfo's v0 `checkpoint`."""
    if isinstance(value, dict):
        return {k: mesos_json_without_quirks(v) for k, v in value.items()
                if v != [] and not (k == "checkpoint" and "hostname" in value and "resources" in value)}
    if isinstance(value, list):
        return [mesos_json_without_quirks(v) for v in value]
    return value


def without_live_values(value: Any) -> Any:
    """Values that move between two back-to-back answers removed (container statistics, metrics)."""
    if isinstance(value, dict):
        return {k: without_live_values(v) for k, v in value.items() if k not in ("resource_statistics", "metrics")}
    if isinstance(value, list):
        return [without_live_values(v) for v in value]
    return value
