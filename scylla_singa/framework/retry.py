"""Which process failures are worth a restart, and how to say what happened.

A restart re-places the whole gang and resumes from the newest checkpoint;
that helps when a host or container died, not when the job itself is wrong.
So an unknown image, an invalid task or a runtime that exits with 2 (bad
configuration, per docs/contracts.md) end the job at once: no retry storm.
And a launch the master refused because its offers were no longer valid
(rescinded, or already used) is no failure at all: nothing ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import TaskRecord

_NO_RETRY_REASONS = {"REASON_TASK_INVALID", "REASON_TASK_UNAUTHORIZED"}
_IMAGE_MISSING = re.compile(r"(no such image|image .*(not found|not on the agent|cannot be pulled)|"
                            r"not found: manifest|pull access denied|failed to pull|unable to find image)", re.I)
_CONFIG_EXIT = re.compile(r"(exit(ed)?( with)? (status|code) 2\b|exit code: 2\b|returned 2\b)", re.I)


# What Mesos's master answers a LAUNCH with when an offer of the ACCEPT was rescinded, already used or
# unknown: TASK_LOST (TASK_DROPPED for a PARTITION_AWARE framework) with this reason, from the master.
_REFUSED_LAUNCH_STATES = {"TASK_LOST", "TASK_DROPPED"}
_INVALID_OFFERS = "REASON_INVALID_OFFERS"
# What it answers an explicit reconciliation of a task it has never heard of (TASK_UNKNOWN when partition-aware).
_UNKNOWN_TASK_STATES = {"TASK_LOST", "TASK_DROPPED", "TASK_UNKNOWN"}
_RECONCILIATION = "REASON_RECONCILIATION"


def launch_refused(task: TaskRecord, state_before: str) -> bool:
    """Whether `task` never started, so nothing failed and the gang is simply placed again: the master
    refused its offers, or (`state_before` STAGING: no agent ever reported it) a reconciliation says the
    master has never heard of it - its ACCEPT never arrived (sent while the driver re-subscribed)."""
    if task.state in _REFUSED_LAUNCH_STATES and task.reason == _INVALID_OFFERS:
        return True
    return state_before == "TASK_STAGING" and task.state in _UNKNOWN_TASK_STATES and task.reason == _RECONCILIATION


@dataclass(frozen=True)
class Verdict:
    retryable: bool
    summary: str


def classify_failure(task: TaskRecord) -> Verdict:
    """Whether restarting the gang can help after `task` ended badly."""
    what = f"process {task.proc} ({task.task_id}) on {task.hostname}: {task.state}"
    detail = ", ".join(x for x in (task.reason, task.message) if x)
    summary = f"{what}{' - ' + detail if detail else ''}"
    if task.state == "TASK_ERROR" or task.reason in _NO_RETRY_REASONS:
        return Verdict(False, summary)
    if _IMAGE_MISSING.search(task.message):
        return Verdict(False, summary)
    if task.state == "TASK_FAILED" and _CONFIG_EXIT.search(task.message):
        return Verdict(False, summary + " (bad job configuration; not restarted)")
    return Verdict(True, summary)
