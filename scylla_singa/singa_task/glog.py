"""Real SINGA 0.3.0's log lines, read as events (sans-I/O).

SINGA logs through glog (`GLOG_logtostderr=1`): `<L><yyyymmdd> <hh:mm:ss.us>
<thread> <file>:<line>] <message>`, L one of I W E F. What matters here:

    proc #<K> -> <endpoint> (pid = <P>)         cluster.cc: registered as process K
    Train @ step <N>  Loss = <l>, accuracy = <a>   worker.cc: group 0 worker 0 displays
    Test @ step <N> / Validation @ step <N>     worker.cc: a test (validation) starts, then
       Loss = <l>, accuracy = <a>               one indented line per displaying layer
    checkpoint to <dir>/step<N>-worker<K>       worker.cc: a checkpoint file is written
    F... <fatal message>                        glog FATAL / failed CHECK: SINGA aborts (134)

SingaMetrics are `name = value` pairs joined by ", ": `Loss`, `accuracy` (softmax
loss), `Squared Error` (RBM), `loss`/`ppl` (the rnnlm example). libprotobuf's
own `[libprotobuf ERROR ...] Error parsing text-format ...` line (not glog)
precedes the fatal CHECK of a bad conf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

GLOG_LINE = re.compile(
    r"^(?P<severity>[IWEF])(?P<date>\d{8}) (?P<time>\d\d:\d\d:\d\d\.\d{6})\s+(?P<thread>\d+)"
    r" (?P<source>[^:\]\s]+):(?P<line>\d+)\] (?P<message>.*)$")
REGISTERED = re.compile(r"^proc #(?P<proc>-?\d+) -> (?P<endpoint>\S+) \(pid = (?P<pid>\d+)\)")
TRAIN = re.compile(r"^Train @ step (?P<step>\d+)\s+(?P<metrics>.*)$")
PHASE = re.compile(r"^(?P<phase>Test|Validation) @ step (?P<step>\d+)\s*$")
INDENTED_METRICS = re.compile(r"^\s+(?P<metrics>\S.*=.*)$")
CHECKPOINT = re.compile(r"^checkpoint to (?P<path>\S*/step(?P<step>\d+)-worker(?P<worker>\d+))\s*$")
METRIC = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z ]*?)\s*=\s*(?P<value>[-+0-9.eEinfa]+)\s*$")
PROTOBUF_PARSE_ERROR = re.compile(
    r"^\[libprotobuf ERROR [^\]]*\] Error parsing text-format singa\.(?P<message_type>\w+): "
    r"(?P<line>\d+):(?P<col>\d+): (?P<reason>.*)$")

# Metric names as SINGA prints them -> the names PROGRESS reports use.
METRIC_NAMES = {"Loss": "loss", "loss": "loss", "accuracy": "accuracy", "Squared Error": "squared_error",
                "ppl": "perplexity"}


@dataclass(frozen=True)
class SingaRegistered:
    proc: int
    endpoint: str


@dataclass(frozen=True)
class SingaMetrics:
    """SingaMetrics displayed at `step` in `phase` ("train", "test" or "validate"); `t` the log time (s)."""

    phase: str
    step: int
    values: dict[str, float]
    t: float


@dataclass(frozen=True)
class SingaCheckpointWritten:
    step: int
    worker: int
    path: str


@dataclass(frozen=True)
class Fatal:
    """SINGA is aborting: the FATAL message, and the text-format error that caused it, if any."""

    source: str
    message: str
    parse_error: tuple[str, int, int, str] | None = None   # (message type, line, col, reason)


Event = SingaRegistered | SingaMetrics | SingaCheckpointWritten | Fatal


def parse_metrics(text: str) -> dict[str, float]:
    """`Loss = 0.1, accuracy = 0.9` -> {"loss": 0.1, "accuracy": 0.9}; unknown names keep a snake_case name."""
    out: dict[str, float] = {}
    for part in text.split(","):
        m = METRIC.match(part)
        if m is None:
            continue
        name = m.group("name").strip()
        try:
            out[METRIC_NAMES.get(name, name.lower().replace(" ", "_"))] = float(m.group("value"))
        except ValueError:
            continue
    return out


def log_time(date: str, time: str) -> float:
    """Seconds since the epoch of a glog timestamp (read as UTC; only differences are used)."""
    return datetime.strptime(f"{date} {time}", "%Y%m%d %H:%M:%S.%f").timestamp()


@dataclass
class LogReader:
    """Feeds SINGA's output one line at a time; `feed` returns the events the line completes.

    A test or validation's metric lines follow its `... @ step N` line, one
    indented line per displaying layer, possibly after other log lines
    (RBMs warn from blob.cc while they test); each is reported as it comes,
    as SingaMetrics of that phase and step, until the next display starts.
    """

    phase: tuple[str, int] | None = None
    last_parse_error: tuple[str, int, int, str] | None = None

    def feed(self, line: str) -> list[Event]:
        line = line.rstrip("\n")
        perr = PROTOBUF_PARSE_ERROR.match(line)
        if perr:
            self.last_parse_error = (perr.group("message_type"), int(perr.group("line")), int(perr.group("col")),
                                     perr.group("reason"))
            return []
        g = GLOG_LINE.match(line)
        if g is None:
            return []
        msg, t = g.group("message"), log_time(g.group("date"), g.group("time"))
        if self.phase is not None and (m := INDENTED_METRICS.match(msg)):
            values = parse_metrics(m.group("metrics"))
            return [SingaMetrics(self.phase[0], self.phase[1], values, t)] if values else []
        return self._event(g.group("severity"), g.group("source"), msg, t)

    def flush(self) -> list[Event]:
        """Events still held at the end of the output (none: every event is reported as it comes)."""
        return []

    def _event(self, severity: str, source: str, msg: str, t: float) -> list[Event]:
        if severity == "F":
            self.phase = None
            return [Fatal(source, msg, self.last_parse_error)]
        if m := TRAIN.match(msg):
            self.phase = None
            values = parse_metrics(m.group("metrics"))
            return [SingaMetrics("train", int(m.group("step")), values, t)] if values else []
        if m := PHASE.match(msg):
            self.phase = ("test" if m.group("phase") == "Test" else "validate", int(m.group("step")))
            return []
        if m := REGISTERED.match(msg):
            return [SingaRegistered(int(m.group("proc")), m.group("endpoint"))]
        if m := CHECKPOINT.match(msg):
            return [SingaCheckpointWritten(int(m.group("step")), int(m.group("worker")), m.group("path"))]
        return []
