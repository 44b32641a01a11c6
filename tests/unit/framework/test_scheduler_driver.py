"""The framework's driver: RECONCILE names each task's agent (pymesos's own drops it).

A master answers an explicit reconciliation per agent, so the agent id is
what lets a new leader wait for an agent that has not re-registered yet
instead of calling a running task lost (the master side of that is tested
in tests/unit/mesos/test_master_failover.py).
"""

from __future__ import annotations

import json
from typing import Any

from pymesos import MesosSchedulerDriver

from scylla_singa.framework.scheduler_driver import SchedulerDriver, reconcile_call
from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import SCHEDULER, MediaType

TASKS = [{"task_id": {"value": "j1.proc-0.a1"}, "agent_id": {"value": "S1"}},
         {"task_id": {"value": "j1.proc-1.a1"}, "agent_id": {"value": "S2"}}]


def recording(driver_class: type[MesosSchedulerDriver]) -> Any:
    """A connected-looking `driver_class` that keeps every call body instead of POSTing it."""

    class Recording(driver_class):  # type: ignore[misc, valid-type]
        def _send(self, body, path="/api/v1/scheduler", method="POST", headers={}):  # noqa: B006 - pymesos's
            self.sent.append(json.loads(json.dumps(body)))
            return {}

    d = Recording(None, {"user": "nobody", "name": "rec"}, "127.0.0.1:1", failover=True)
    d.framework_id, d.stream_id, d.sent = "fw-1", "stream-1", []
    return d


def test_pymesos_alone_would_drop_the_agent_ids() -> None:
    """Why the subclass exists: if pymesos starts keeping agent ids, it can go."""
    d = recording(MesosSchedulerDriver)
    d.reconcileTasks(TASKS)
    assert [t for t in d.sent[0]["reconcile"]["tasks"] if "agent_id" in t] == []


def test_our_driver_sends_each_task_with_its_agent() -> None:
    d = recording(SchedulerDriver)
    d.reconcileTasks(TASKS)
    assert d.sent == [{"type": "RECONCILE", "framework_id": {"value": "fw-1"}, "reconcile": {"tasks": TASKS}}]


def test_an_empty_list_is_an_implicit_reconciliation() -> None:
    d = recording(SchedulerDriver)
    d.reconcileTasks([])
    assert d.sent[0]["reconcile"] == {"tasks": []}


def test_a_task_without_an_agent_is_asked_by_task_id_alone() -> None:
    body = reconcile_call("fw-1", [{"task_id": {"value": "t"}, "agent_id": None}])
    assert body["reconcile"]["tasks"] == [{"task_id": {"value": "t"}}]


def test_nothing_is_sent_while_disconnected() -> None:
    d = recording(SchedulerDriver)
    d.stream_id = None
    d.reconcileTasks(TASKS)
    assert d.sent == []


def test_the_call_is_a_mesos_v1_reconcile_in_both_codecs() -> None:
    body = reconcile_call("fw-1", TASKS)
    wire = codec.from_dict(SCHEDULER.call(), body, strict=True).SerializeToString()
    assert codec.decode_call(SCHEDULER, wire, MediaType.PROTOBUF) == body
    assert codec.decode_call(SCHEDULER, json.dumps(body).encode(), MediaType.JSON) == body
