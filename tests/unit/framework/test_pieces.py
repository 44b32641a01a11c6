"""The framework's pure pieces: offers, TaskInfo, store round trip, progress, delivery, results."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from scylla_singa.contracts import parse_task_id, task_id
from scylla_singa.delivery.hdfs import HdfsDelivery
from scylla_singa.delivery.job_files import DeliveryError, cluster_file
from scylla_singa.delivery.volume import VolumeDelivery
from scylla_singa.framework import core_events as ev
from scylla_singa.framework.core import FrameworkCore
from scylla_singa.framework.model import TaskRecord, new_job_id
from scylla_singa.framework.offers import agent_views
from scylla_singa.framework.progress_book import ProgressBook, from_current_attempt
from scylla_singa.framework.progress_report import BadProgress, parse_progress
from scylla_singa.framework.results import parse_final
from scylla_singa.framework.retry import classify_failure
from scylla_singa.framework.store import JobStore
from scylla_singa.framework.taskinfo import build_task
from scylla_singa.jobconf.plan import load_plan
from .builders import ARTIFACTS, REPO, offer, spec, submit_and_prepare


def test_offers_of_one_agent_are_summed_with_attributes_and_bandwidth() -> None:
    views = agent_views([offer("a1", cpus=1, mem=100, rack="r1"), offer("a1", cpus=2, mem=50),
                         offer("a2", cpus=4, net_bw=1000)])
    assert [(v.agent_id, v.free.cpus, v.free.mem_mb) for v in views] == [("a1", 3, 150), ("a2", 4, 4096)]
    assert views[0].attributes == {"rack": "r1"} and views[0].net_bw_mbps is None
    assert views[1].net_bw_mbps == 1000


def test_taskinfo_maps_to_what_mesos_docker_containerizer_understands() -> None:
    s = spec("examples/frameworks/downpour.conf", job_id="dp-1")
    plan = load_plan(REPO / "examples/frameworks/downpour.conf")
    task = build_task(s, plan.procs[4], 3, "agent-7", ARTIFACTS, net_bw_mbps=2.5, progress_url="http://h:1/progress")
    assert task["task_id"] == {"value": "dp-1.proc-4.a3"} and task["agent_id"] == {"value": "agent-7"}
    res = {r["name"]: r["scalar"]["value"] for r in task["resources"]}
    assert res == {"cpus": 1.0, "mem": float(plan.procs[4].demand.mem_mb), "net_bw": 2.5}
    c = task["container"]
    assert c["type"] == "DOCKER" and c["docker"]["image"] == "singa:latest" and c["docker"]["network"] == "USER"
    assert "privileged" not in c["docker"] or c["docker"]["privileged"] is False
    assert c["hostname"] == "dp-1-proc-4" and c["volumes"] == [dict(v) for v in ARTIFACTS.volumes]
    assert task["command"]["value"] == ("exec singa -conf /mnt/scylla/job.conf -procs_id 4 "
                                        "-cluster /mnt/scylla/cluster.json -workspace /workspace -resume")
    assert task["kill_policy"]["grace_period"]["nanoseconds"] == 10 * 10**9


def test_task_ids_round_trip_and_job_ids_are_dns_safe() -> None:
    assert parse_task_id(task_id("my-job-1a2b3c", 12, 4)) == ("my-job-1a2b3c", 12, 4)
    assert parse_task_id("something-else") is None
    jid = new_job_id("Digits MLP_v2!")
    assert jid.startswith("digits-mlp-v2-") and all(c.isalnum() or c == "-" for c in jid)


def test_store_round_trips_a_live_job(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "f.sqlite")
    core = FrameworkCore()
    core.handle(ev.Registered("fw-1"), 0)
    submit_and_prepare(core, spec(job_id="j9"))
    core.handle(ev.OffersReceived((offer("a1", cpus=8),)), 1)
    job = core.jobs["j9"]
    store.save(job, "fw-1")
    back = store.load("j9")
    assert back.state == job.state and back.tasks == job.tasks and back.artifacts == job.artifacts
    assert back.plan == job.plan and back.history == [tuple(h) for h in job.history]
    assert [j.job_id for j in store.live_jobs()] == ["j9"]
    assert list(store.jobs())[0][2] == "fw-1"
    store.set_meta("framework_id", "fw-1")
    assert store.get_meta("framework_id") == "fw-1" and store.find("j") == ["j9"]


@pytest.mark.parametrize("data, error", [
    pytest.param([], "JSON object", id="not-object"),
    pytest.param({"step": 1}, "'job'", id="no-job"),
    pytest.param({"job": "j", "step": "x"}, "step must be an integer", id="bad-step"),
])
def test_bad_progress_is_refused(data, error) -> None:
    with pytest.raises(BadProgress, match=error):
        parse_progress(data)


def test_progress_book_summarises_workers() -> None:
    book = ProgressBook()
    for worker, loss in ((0, 1.0), (1, 3.0)):
        book.add(parse_progress({"job": "j", "proc": worker, "group": 0, "worker": worker, "step": 50,
                                 "loss": loss, "accuracy": 0.5, "samples_per_s": 100.0}))
    book.add(parse_progress({"job": "j", "proc": 0, "step": 60, "phase": "test", "accuracy": 0.93,
                             "loss": float("nan")}))
    s = book.summary("j")
    assert (s.step, s.loss, s.accuracy, s.samples_per_s, s.test_accuracy) == (50, 2.0, 0.5, 200.0, 0.93)
    assert book.summary("other") is None and len(book.history("j")) == 3


@pytest.mark.parametrize("task, kept", [
    pytest.param("j.proc-0.a2", True, id="current-attempt"),
    pytest.param("j.proc-0.a1", False, id="replaced-attempt"),
    pytest.param(None, True, id="no-task-id"),
])
def test_only_the_current_attempt_reports_progress(task, kept) -> None:
    p = parse_progress({"job": "j", "step": 5, **({"task": task} if task else {})})
    assert from_current_attempt(p, {"j.proc-0.a2": object(), "j.proc-1.a2": object()}) is kept


def test_final_line_is_found_in_stdout() -> None:
    out = 'PROGRESS {"step": 1}\nFINAL {"steps": 600, "test_accuracy": 0.95}\nbye\n'
    assert parse_final(out) == {"steps": 600, "test_accuracy": 0.95}
    assert parse_final("nothing") is None


def test_volume_delivery_writes_files_read_only_and_a_writable_workspace(tmp_path: Path) -> None:
    d = VolumeDelivery(tmp_path / "jobs", (tmp_path,))
    plan = load_plan(REPO / "examples/frameworks/hogwild.conf")
    art = d.prepare("j1", {"job.conf": b"x", "cluster.json": cluster_file("j1", plan)}, "scylla-j1")
    assert json.loads((tmp_path / "jobs/j1/cluster.json").read_text())["procs"][2] == \
        {"id": 2, "host": "j1-proc-2", "port": 6723}
    # The job files at absolute paths outside the sandbox (a Mesos sandbox is 0750 root), from the host's copies.
    assert {v["container_path"]: (v["host_path"], v["mode"]) for v in art.volumes} == {
        "/mnt/scylla/job.conf": (str(tmp_path / "jobs/j1/job.conf"), "RO"),
        "/mnt/scylla/cluster.json": (str(tmp_path / "jobs/j1/cluster.json"), "RO"),
        "/workspace": (str(tmp_path / "jobs/j1/workspace"), "RW")}
    assert stat.S_IMODE(os.stat(tmp_path / "jobs/j1/workspace").st_mode) & 0o777 == 0o777
    (tmp_path / "jobs/j1/workspace/ckpt").write_text("c")
    d.cleanup("j1", keep_workspace=True)
    assert sorted(p.name for p in (tmp_path / "jobs/j1").iterdir()) == ["workspace"]
    d.cleanup("j1", keep_workspace=False)
    assert not (tmp_path / "jobs/j1").exists()


def test_volume_root_outside_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DeliveryError, match="outside the allowed roots"):
        VolumeDelivery(Path("/etc/scylla"), (tmp_path,))
    with pytest.raises(DeliveryError):
        VolumeDelivery(tmp_path / ".." / "escape", (tmp_path,))


def test_hdfs_delivery_needs_a_webhdfs_url() -> None:
    with pytest.raises(DeliveryError, match="WebHDFS URL"):
        HdfsDelivery("namenode:9870")


class FakeWebHdfs:
    """Records the WebHDFS calls the hdfs client makes (a unit test of our requests only)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, bytes | None]] = []

    def makedirs(self, path: str) -> None:
        self.calls.append(("MKDIRS", path, None))

    def write(self, path: str, data: bytes, overwrite: bool) -> None:
        assert overwrite
        self.calls.append(("CREATE", path, data))

    def list(self, path: str) -> list[str]:
        return ["job.conf", "cluster.json", "workspace"]

    def delete(self, path: str, recursive: bool) -> None:
        self.calls.append(("DELETE", path, None))


def test_hdfs_delivery_uploads_and_hands_webhdfs_uris_to_the_fetcher() -> None:
    d = HdfsDelivery("http://nn.example:9870")
    d.client = FakeWebHdfs()
    art = d.prepare("j1", {"job.conf": b"conf", "cluster.json": b"{}"}, "scylla-j1")
    assert d.client.calls == [("MKDIRS", "/scylla/j1/workspace", None), ("CREATE", "/scylla/j1/job.conf", b"conf"),
                              ("CREATE", "/scylla/j1/cluster.json", b"{}")]
    # http:// URIs a stock Mesos fetcher downloads itself (hdfs:// would need Hadoop on every agent).
    assert [(u["value"], u["output_file"]) for u in art.uris] == [
        ("http://nn.example:9870/webhdfs/v1/scylla/j1/job.conf?op=OPEN&user.name=scylla", "job.conf"),
        ("http://nn.example:9870/webhdfs/v1/scylla/j1/cluster.json?op=OPEN&user.name=scylla", "cluster.json")]
    assert all(u["extract"] is False and u["cache"] is False for u in art.uris)
    # The fetched copies (relative host paths: in the sandbox) mounted where the non-root task reads them.
    assert [(v["host_path"], v["container_path"], v["mode"]) for v in art.volumes] == [
        ("job.conf", "/mnt/scylla/job.conf", "RO"), ("cluster.json", "/mnt/scylla/cluster.json", "RO")]
    assert art.workspace == "hdfs://nn.example:8020/scylla/j1/workspace"
    assert dict(art.env) == {"SCYLLA_WEBHDFS_URL": "http://nn.example:9870"}
    d.client.calls.clear()
    d.cleanup("j1", keep_workspace=True)
    assert [c[1] for c in d.client.calls] == ["/scylla/j1/job.conf", "/scylla/j1/cluster.json"]


@pytest.mark.parametrize("state, reason, message, retry", [
    pytest.param("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED", "Command exited with status 137", True, id="killed"),
    pytest.param("TASK_LOST", "REASON_AGENT_REMOVED", "agent gone", True, id="lost"),
    pytest.param("TASK_FAILED", "REASON_CONTAINER_LAUNCH_FAILED", "No such image: x:1", False, id="image"),
    pytest.param("TASK_FAILED", "REASON_CONTAINER_LAUNCH_FAILED",
                 "Failed to launch container: image x:1 is not on the agent and cannot be pulled: dial tcp", False,
                 id="image-not-on-agent"),
    pytest.param("TASK_ERROR", "REASON_TASK_INVALID", "bad", False, id="invalid"),
    pytest.param("TASK_FAILED", "REASON_COMMAND_EXECUTOR_FAILED", "Command exited with status 2", False, id="config"),
])
def test_failure_classification(state, reason, message, retry) -> None:
    t = TaskRecord("j.proc-0.a1", 0, 1, "a", "node1", state, reason, message)
    assert classify_failure(t).retryable is retry




def test_a_store_from_before_progress_named_its_task_is_upgraded_in_place(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the progress table as the first release made it
        db.execute("CREATE TABLE progress (job_id TEXT NOT NULL, at REAL NOT NULL, proc INTEGER, grp INTEGER, "
                   "worker INTEGER, step INTEGER, phase TEXT, loss REAL, accuracy REAL, samples_per_s REAL)")
        db.execute("INSERT INTO progress VALUES ('j', 1.0, 0, 0, 0, 10, 'train', 1.5, 0.5, 100.0)")
    store = JobStore(path)
    store.add_progress("j", {"job": "j", "step": 20, "task": "j.proc-0.a2"})
    assert [(p["step"], p["task"]) for p in store.progress("j")] == [(10, None), (20, "j.proc-0.a2")]


def test_with_no_master_and_no_way_to_start_one_run_says_what_to_give(tmp_path, monkeypatch) -> None:
    """The framework starts an embedded master only through what the command line wires in."""
    import io

    from rich.console import Console

    from scylla_singa.framework.session import RunOptions, Session, SessionWiring, UsageError

    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    session = Session(RunOptions(), Console(file=io.StringIO()), SessionWiring())
    with pytest.raises(UsageError, match="give --master HOST:PORT"):
        session._local_master()
