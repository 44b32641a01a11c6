"""bench/profile_kinds.split_by_kind: py-spy's collapsed stacks of the master, split by kind of work.

A sample counts for the first rule one of whose functions is on its stack,
the loop's own frames are the event loop, anything else is 'other'.
"""

from __future__ import annotations

import pytest

from bench.profile_kinds import EVENT_LOOP, split_by_kind

LOOP = "<module> (scylla-singa:8);Runner.run (asyncio/runners.py:118)"


@pytest.mark.parametrize("frames, kind", [
    ("FullCollectionPacer._tick (x.py:1);FullCollectionPacer.collect_now (x.py:2)",
     "garbage collector: full collections (paced, mesos/api/collector_pacing.py)"),
    ("MasterHTTP.agent_ws (m.py:1);AgentRegistry.agent_message (a.py:1);AgentRegistry._finish_task (a.py:2)",
     "task end: resources back to the allocator (DRF)"),
    ("MasterHTTP.agent_ws (m.py:1);loads (c.py:1)", "agent link: receive, decode the agents' batches"),
    ("HeadDeadlineProtocol.data_received (h.py:1);SchedulerEndpoint.quick_answer (s.py:1);decode_call (c.py:1)",
     "scheduler call: body decode + validate (JSON)"),
    ("Master._allocate (m.py:1);HierarchicalAllocator.allocate (a.py:1)", "allocation round + OFFERS events"),
    ("", EVENT_LOOP),
    ("Resources.__init__ (r.py:1)", "other"),
])
def test_a_sample_counts_for_the_first_rule_on_its_stack(frames: str, kind: str) -> None:
    stack = f"{LOOP};{frames}" if frames else LOOP
    assert split_by_kind(f"{stack} 3\n{LOOP};Resources.__init__ (r.py:1) 1\n") == (
        {kind: 100.0} if kind == "other" else {kind: 75.0, "other": 25.0})


def _qualified_names() -> set[str]:
    """`function` and `Class.method` of every module of the package (as py-spy names frames)."""
    import ast
    from pathlib import Path

    import scylla_singa
    names: set[str] = set()
    for path in Path(scylla_singa.__file__).parent.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.ClassDef):
                names.update(f"{node.name}.{item.name}" for item in node.body
                             if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef))
    return names


def test_every_function_a_rule_names_is_in_the_package() -> None:
    """A renamed handler would silently move its samples to another kind (decode_call_noting_finite once
    counted as 'the rest of the handler'); aiohttp's RequestHandler is not ours to check."""
    from bench.profile_kinds import RULES
    known = _qualified_names()
    missing = [name for _, marks in RULES for name in marks
               if not name.startswith("RequestHandler.") and name not in known]
    assert not missing, f"rules name functions the package does not have: {missing}"
