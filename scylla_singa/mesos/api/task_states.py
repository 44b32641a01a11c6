"""Mesos's task states, as the v1 API spells them: which are terminal, which are active.

TERMINAL_TASK_STATES is Mesos's own `isTerminalState`: a task in one of
these never changes state again (TASK_UNREACHABLE and TASK_UNKNOWN are not
terminal: the task may come back). Every part that asks "has this task
ended?" in Mesos's sense uses this set; a part that gives up on a task
sooner says so under its own name (the framework's ENDED_TASK_STATES).
"""

from __future__ import annotations

TERMINAL_TASK_STATES = frozenset({
    "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED", "TASK_GONE",
    "TASK_GONE_BY_OPERATOR"})
# The states a task can be in while the master still holds it, in the order pages list them.
ACTIVE_TASK_STATES = ("TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_UNREACHABLE")
# The `master/tasks_<name>` counters of /metrics/snapshot for tasks that ended (lower case, no TASK_).
ENDED_TASK_COUNTERS = ("finished", "failed", "killed", "lost", "error", "dropped", "gone", "unknown")
