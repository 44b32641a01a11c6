"""Split py-spy's collapsed stacks (`--format raw`) of the master by kind of work, for docs/benchmarks.md.

A sample counts for the first rule (in order) one of whose functions is on
its stack; functions are matched by their qualified name as py-spy writes it
(`Class.method`). The rules name the master's own handlers, most specific
first, so the split follows the messages of one background task: its offer,
the ACCEPT with its RUN_TASK, three status updates forwarded to the
framework, three ACKNOWLEDGE calls forwarded to the agent.
"""

from __future__ import annotations

from .report import Table

# (kind, qualified function names that mark it), most specific first
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("garbage collector: full collections (paced, mesos/api/collector_pacing.py)", ("FullCollectionPacer.collect_now",)),
    ("task end: resources back to the allocator (DRF)", ("AgentRegistry._finish_task",)),
    ("status update from an agent: record, forward to the framework", ("AgentRegistry.agent_message",)),
    ("agent link: receive, decode the agents' batches", ("MasterHTTP.agent_ws",)),
    ("agent link: send RUN_TASK / ACK batches", ("AgentLink.pump",)),
    ("ACCEPT: validate, launch, RUN_TASK", ("Master._call_accept",)),
    ("ACKNOWLEDGE: forward to the agent", ("Master._call_acknowledge",)),
    ("DECLINE and other calls", ("Master.handle_call", "Master.check_call", "count_call")),
    ("scheduler call: body decode + validate (JSON)", ("read_call", "decode_call", "decode_call_noting_finite",
                                                       "validate_scheduler_call")),
    ("event streams: write OFFERS / UPDATE events", ("EventStream.pump", "EventStream.serve")),
    ("allocation round + OFFERS events", ("Master._allocate",)),
    ("metrics and state views", ("MasterHTTP.metrics", "MasterHTTP.state", "metrics_json")),
    ("scheduler call: the rest of the handler (202 answer)", ("SchedulerEndpoint.handle",
                                                              "SchedulerEndpoint.quick_answer")),
    ("HTTP server: parse requests, run handlers, write answers (aiohttp, quick lane)",
     ("RequestHandler.data_received", "RequestHandler.start", "RequestHandler._handle_request",
      "RequestHandler.finish_response", "HeadDeadlineProtocol.data_received")),
    ("timers: heartbeats, agent pings, offer timeouts", ("Master._heartbeat", "AgentRegistry.ping_agents")),
]
EVENT_LOOP = "event loop itself (polling, callbacks)"


def split_by_kind(collapsed: str) -> dict[str, float]:
    """Percent of samples per kind (the loop itself and 'other' included); `collapsed` is py-spy raw output."""
    counts: dict[str, int] = {}
    total = 0
    for line in collapsed.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        total += int(n)
        names = {frame.split(" (", 1)[0] for frame in stack.split(";")}
        kind = next((k for k, marks in RULES if not names.isdisjoint(marks)), None)
        if kind is None:
            leaf = stack.rsplit(";", 1)[-1].split(" (", 1)[0]
            kind = EVENT_LOOP if leaf in ("Runner.run", "BaseEventLoop._run_once", "EpollSelector.select",
                                          "BaseEventLoop.run_forever", "Handle._run") else "other"
        counts[kind] = counts.get(kind, 0) + int(n)
    return {k: round(100.0 * v / total, 1) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])} if total else {}


def kinds_table(before: dict | None, after: dict) -> Table:
    """The master's CPU per background task by kind of work, in microseconds, before and after."""
    def per_task(summary: dict | None) -> dict[str, float]:
        if not summary or not summary.get("ms_per_task", {}).get("master"):
            return {}
        ms = summary["ms_per_task"]["master"]
        return {k: 10.0 * pct * ms for k, pct in summary.get("kinds", {}).get("master", {}).items()}
    b, a = per_task(before), per_task(after)
    order = sorted(set(a) | set(b), key=lambda k: -max(a.get(k, 0.0), b.get(k, 0.0)))
    rows = [[k, f"{b[k]:.0f}" if k in b else "-", f"{a[k]:.0f}" if k in a else "-"] for k in order]
    total = [sum(b.values()), sum(a.values())]
    rows.append(["**all (master CPU per task)**", f"**{total[0]:.0f}**" if b else "-", f"**{total[1]:.0f}**"])
    return Table(["Master's work per background task", "us before", "us after"], rows)
