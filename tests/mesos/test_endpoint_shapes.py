"""Our master's and agent's read-only answers have the shapes a real Mesos 1.12 wrote, field by field.

The scenario mirrors the recorded one (tests/fixtures/apache_mesos/README.md):
one framework launches a task that keeps running, one that finishes, one that
fails and one the master refuses (TASK_ERROR); every endpoint is read while
the first task runs ("running") and after it was killed and a second
framework was torn down ("after"). Each answer is compared with the recorded
answer of the same name (tests/support/json_shapes.py says how). Agents run
real processes; no Docker.

Documented differences (also in README's compatibility table) are listed in
ALLOWED with their reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
import requests

from scylla_singa.mesos.api import codec
from scylla_singa.mesos.api.codec import MASTER_OPERATOR
from tests.support.json_shapes import shape_differences
from tests.support.mesos_framework import TestFramework, task_info

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "apache_mesos"
FREE = frozenset({"/flags", "/flags/flags", "*/resources", "*/used_resources", "*/offered_resources",
                  "*/reserved_resources", "*/unreserved_resources", "*/reserved_resources_full",
                  "*/unreserved_resources_allocated", "*/reserved_resources_allocated", "*/attributes",
                  "*/guarantee", "*/limit", "*/consumed", "*/allocated", "*/offered", "*/reserved",
                  "*/offer_constraints", "*/statistics"})
ALLOWED = {
    ":log_dir": "Mesos writes log_dir only when started with --log_dir; our processes log to stderr",
    "*/master_info:capabilities": "no master capability is advertised (README: QUOTA_V2 and the others)",
    "*/framework_info:capabilities": "pymesos declares GPU_RESOURCES; the recorded framework declared none",
    # differences of the scenario, not of the shapes: the recorded tasks were Docker ones
    "*/container:docker": "DockerInfo is there for DOCKER containers; these tasks have MESOS ones",
    "*/container:network_infos": "the recorded tasks asked for a USER network; these do not",
    "*/statuses[]:container_status": "written when the executor sent one (the first recorded status was a "
                                     "fetch failure without)",
}
MASTER_ENDPOINTS = ["state", "state-unprefixed", "state-summary", "slaves", "frameworks", "tasks", "tasks-limit-1",
                    "roles", "flags", "version", "metrics-snapshot"]
AGENT_ENDPOINTS = ["state", "flags", "containers", "version", "metrics-snapshot"]
OPERATOR_CALLS = ["GET_HEALTH", "GET_VERSION", "GET_STATE", "GET_AGENTS", "GET_FRAMEWORKS", "GET_TASKS", "GET_MASTER",
                  "GET_METRICS", "GET_FLAGS"]


def recorded(kind: str, name: str, phase: str) -> dict[str, Any]:
    return json.loads((FIXTURES / kind / f"{name}.{phase}.json").read_text())


class Scenario:
    """The recorded scenario replayed on an embedded master with one process agent."""

    def __init__(self, cluster) -> None:
        self.mesos = cluster([{"resources": "cpus:4;mem:8192;disk:10240;ports:[31000-32000]"}], simulate=False,
                             use_docker=False)
        self.master, self.agent = self.mesos.master_address, self.mesos.agent_addresses[0]
        self.framework = TestFramework(self.master, name="shapes", capabilities=["GPU_RESOURCES"]).start()
        offer = self.framework.take_offer()
        # as recorded: labels on every task, and a container (MESOS here, a plain process)
        labels = lambda name: {"labels": {"labels": [{"key": "shapes.fixture", "value": name}]},  # noqa: E731
                               "container": {"type": "MESOS"}}
        self.running = task_info(offer["agent_id"], command="sleep 600", extra=labels("running"), grace_s=3)
        tasks = [self.running, task_info(offer["agent_id"], command="exit 0", extra=labels("finished"), grace_s=3),
                 task_info(offer["agent_id"], command="exit 3", extra=labels("failed"), grace_s=3),
                 task_info(offer["agent_id"], cpus=10000, extra=labels("oversized"), grace_s=3)]
        self.framework.launch(offer, tasks, refuse_seconds=1)
        for task, state in zip(tasks, ("TASK_RUNNING", "TASK_FINISHED", "TASK_FAILED", "TASK_ERROR")):
            self.framework.wait_state(task["task_id"]["value"], state)

    def finish(self) -> None:
        self.framework.driver.killTask(self.running["task_id"])
        self.framework.wait_state(self.running["task_id"]["value"], "TASK_KILLED")
        # as recorded: a framework subscribing with an id the master does not know, then torn down
        other = TestFramework(self.master, name="errors", framework_id=f"{uuid.uuid4()}-0000").start()
        other.stop()

    def get(self, address: str, path: str) -> requests.Response:
        return requests.get(f"http://{address}{path}", timeout=10, allow_redirects=False)

    def operator(self, address: str, api: codec.Api, kind: str) -> dict[str, Any]:
        body = {"type": kind, **({kind.lower(): {}} if kind == "GET_METRICS" else {})}
        r = requests.post(f"http://{address}/api/v1", json=body, headers={"Accept": "application/json"}, timeout=10)
        assert r.status_code == 200, (kind, r.status_code, r.text)
        answer = r.json()
        # every field is one the Response has, but AgentInfo's v0 `checkpoint`, which Mesos writes too
        codec.from_dict(api.response(), _without_agent_checkpoint(answer), strict=True)
        return answer


def _without_agent_checkpoint(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_agent_checkpoint(v) for k, v in value.items()
                if not (k == "checkpoint" and "hostname" in value and "resources" in value)}
    if isinstance(value, list):
        return [_without_agent_checkpoint(v) for v in value]
    return value


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, Any]:
    """Every answer of both phases, read once for the module (the cluster is the slow part)."""
    from scylla_singa.mesos.embedded import EmbeddedMesos

    made: list[EmbeddedMesos] = []
    # searchable by every user: the agent runs the process tasks as FrameworkInfo.user ("nobody")
    work = tempfile.mkdtemp(prefix="scylla-shapes-")
    os.chmod(work, 0o711)

    def cluster(agents, **kw) -> EmbeddedMesos:
        m = EmbeddedMesos(agents, allocation_interval=0.2, retry_interval=0.5, work_dir=work, insecure=True,
                          **kw)   # shapes, not authentication
        made.append(m)
        return m.start()
    out: dict[str, Any] = {}
    try:
        s = Scenario(cluster)
        for phase in ("running", "after"):
            if phase == "after":
                s.finish()
            for name in MASTER_ENDPOINTS:
                path = recorded("master", name, phase)["request"]["path"]
                out[f"master/{name}.{phase}"] = s.get(s.master, path)
            for name in AGENT_ENDPOINTS:
                out[f"agent/{name}.{phase}"] = s.get(s.agent, recorded("agent", name, phase)["request"]["path"])
            for kind in OPERATOR_CALLS:
                out[f"operator/{kind}.{phase}"] = s.operator(s.master, MASTER_OPERATOR, kind)
        s.framework.stop()
    finally:
        for m in made:
            m.stop()
        shutil.rmtree(work, ignore_errors=True)
    return out


@pytest.mark.parametrize("phase", ["running", "after"])
@pytest.mark.parametrize("name", [n for n in MASTER_ENDPOINTS if n != "metrics-snapshot"])
def test_master_endpoint_has_mesos_shape(answers, name: str, phase: str) -> None:
    ours, mesos = answers[f"master/{name}.{phase}"], recorded("master", name, phase)["response"]
    assert ours.status_code == mesos["status"]
    assert ours.headers.get("Content-Type") == mesos["headers"].get("Content-Type")
    assert shape_differences(ours.json(), mesos["body"], FREE, ALLOWED) == []


@pytest.mark.parametrize("phase", ["running", "after"])
@pytest.mark.parametrize("name", [n for n in AGENT_ENDPOINTS if n != "metrics-snapshot"])
def test_agent_endpoint_has_mesos_shape(answers, name: str, phase: str) -> None:
    ours, mesos = answers[f"agent/{name}.{phase}"], recorded("agent", name, phase)["response"]
    assert ours.status_code == mesos["status"]
    assert shape_differences(ours.json(), mesos["body"], FREE, ALLOWED) == []


@pytest.mark.parametrize("phase", ["running", "after"])
@pytest.mark.parametrize("kind", OPERATOR_CALLS)
def test_operator_call_has_mesos_shape(answers, kind: str, phase: str) -> None:
    mesos = recorded("operator", kind, phase)["response"]["body"]
    assert shape_differences(answers[f"operator/{kind}.{phase}"], mesos, FREE, ALLOWED) == []


# Keys Mesos writes per framework, per role, or per (state, source, reason): compared by their form.
DYNAMIC = re.compile(r"^(master/frameworks/[^/]+/[^/]+/|allocator/mesos/(roles|offer_filters/roles)/[^/]*/|"
                     r"allocator/mesos/quota/roles/|master/task_\w+/source_)")
OUR_EXTRA_METRICS = {f"master/{name}_offered" for name in ("cpus", "mem", "disk", "gpus")}  # the web UI's


def _framework_suffixes(keys) -> set[str]:
    return {k.split("/", 4)[4] for k in keys if k.startswith("master/frameworks/") and k.count("/") >= 4}


@pytest.mark.parametrize("phase", ["running", "after"])
def test_master_metrics_have_every_key_mesos_writes(answers, phase: str) -> None:
    ours = answers[f"master/metrics-snapshot.{phase}"].json()
    mesos = recorded("master", "metrics-snapshot", phase)["response"]["body"]
    static = {k for k in mesos if not DYNAMIC.match(k)}
    assert sorted(static - set(ours)) == []
    assert sorted({k for k in ours if not DYNAMIC.match(k)} - static - OUR_EXTRA_METRICS) == []
    assert _framework_suffixes(ours) == _framework_suffixes(mesos)
    assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in ours.values())


@pytest.mark.parametrize("phase", ["running", "after"])
def test_agent_metrics_have_every_key_mesos_writes(answers, phase: str) -> None:
    ours = answers[f"agent/metrics-snapshot.{phase}"].json()
    mesos = recorded("agent", "metrics-snapshot", phase)["response"]["body"]
    assert sorted(set(mesos) - set(ours)) == [] and sorted(set(ours) - set(mesos)) == []
    assert all(isinstance(v, int | float) and not isinstance(v, bool) for v in ours.values())
