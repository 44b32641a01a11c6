"""Split py-spy's collapsed stacks (`--format raw`) of the master by kind of work, for docs/benchmarks.md.

A sample counts for the first rule (in order) whose function name occurs on
its stack; the rules name the master's own handlers, so the split follows
the messages of one background task.
"""

from __future__ import annotations

# (kind, function names that mark it), most specific first
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("ACCEPT call (validate, launch, RUN_TASK)", ("_call_accept",)),
    ("DECLINE call", ("_call_decline",)),
    ("ACKNOWLEDGE call (forward to agent)", ("_call_acknowledge",)),
    ("other scheduler calls", ("handle_call", "check_call")),
    ("scheduler call: decode + validate", ("read_call",)),
    ("scheduler call: HTTP answer", ("accepted",)),
    ("status update from agent (forward to framework)", ("on_status_update", "_status_update", "status_update")),
    ("allocation + offers", ("_allocate", "_make_offer", "allocate")),
    ("agent link: receive + decode", ("_agent_session", "receive", "_receive_loop")),
    ("event streams: write", ("pump", "write")),
    ("HTTP server (aiohttp parse, dispatch)", ("data_received", "_handle_request", "start")),
    ("metrics / state views", ("snapshot", "metrics")),
]


def split_by_kind(collapsed: str) -> dict[str, float]:
    """Percent of samples per kind (plus 'other' and 'idle'); `collapsed` is py-spy raw output."""
    counts: dict[str, int] = {}
    total = 0
    for line in collapsed.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        total += int(n)
        names = [frame.split(" (", 1)[0] for frame in stack.split(";")]
        kind = next((k for k, marks in RULES if any(m in names for m in marks)), "other")
        counts[kind] = counts.get(kind, 0) + int(n)
    return {k: round(100.0 * v / total, 1) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])} if total else {}
