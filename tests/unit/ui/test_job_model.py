"""The job view's model: curves, rates, hosts and edges, rows, and the framework's Prometheus families."""

from __future__ import annotations

import pytest

from scylla_singa.framework.model import JobState
from scylla_singa.framework.progress_book import Summary
from scylla_singa.ui.job_model import (MAX_POINTS, UNPLACED, curves, framework_metrics, host_groups, job_detail,
                                       job_row, process_rows, steps_per_s)
from scylla_singa.ui.prometheus import render
from .builders import history, job
from tests.support.prometheus_text import parse_exposition

SPLIT = {0: "agent-0", 1: "agent-0", 4: "agent-0", 2: "agent-1", 3: "agent-1", 5: "agent-1"}


def test_train_curve_averages_the_workers_of_each_step() -> None:
    c = curves([{"step": 10, "phase": "train", "loss": 1.0, "accuracy": 0.5},
                {"step": 10, "phase": "train", "loss": 3.0, "accuracy": None},
                {"step": 20, "loss": 0.5, "accuracy": 0.75},                     # phase defaults to train
                {"step": 20, "phase": "test", "loss": 0.4, "accuracy": 0.9}])
    assert c["train"] == [{"step": 10, "loss": 2.0, "accuracy": 0.5, "workers": 2},
                          {"step": 20, "loss": 0.5, "accuracy": 0.75, "workers": 1}]
    assert c["test"] == [{"step": 20, "loss": 0.4, "accuracy": 0.9, "workers": 1}]
    assert c["validate"] == []


def test_long_curves_are_thinned_keeping_the_first_and_newest_points() -> None:
    c = curves({"step": s, "loss": 1.0 / s} for s in range(1, 5001))["train"]
    assert len(c) == MAX_POINTS and c[0]["step"] == 1 and c[-1]["step"] == 5000
    assert [p["step"] for p in c] == sorted(p["step"] for p in c)


def test_records_without_an_integer_step_are_ignored() -> None:
    assert curves([{"step": None, "loss": 1.0}, {"step": "3", "loss": 1.0}])["train"] == []


@pytest.mark.parametrize("rows, want", [
    ([], None),
    ([{"at": 95.0, "step": 10}], None),                                                      # one report
    ([{"at": 90.0, "step": 10}, {"at": 100.0, "step": 60}], 5.0),
    ([{"at": 50.0, "step": 10}, {"at": 60.0, "step": 60}], None),                            # outside the window
    ([{"at": 90.0, "step": 10, "worker": 0}, {"at": 100.0, "step": 60, "worker": 0},
      {"at": 90.0, "step": 10, "worker": 1}, {"at": 100.0, "step": 40, "worker": 1}], 4.0),  # mean of workers
    ([{"at": 90.0, "step": 10}, {"at": 100.0, "step": 60}, {"at": 99.0, "step": 50, "phase": "test"}], 5.0),
], ids=["empty", "single", "steady", "stale", "two-workers", "tests-ignored"])
def test_steps_per_second_over_the_recent_window(rows, want) -> None:
    assert steps_per_s(rows, now=100.0, window_s=30.0) == want


def test_processes_are_grouped_by_the_host_their_task_runs_on() -> None:
    groups = host_groups(process_rows(job(hosts=SPLIT)))
    assert [(g["host"], g["procs"]) for g in groups] == [("agent-0", [0, 1, 4]), ("agent-1", [2, 3, 5])]
    assert all(g["placed"] for g in groups) and groups[0]["agent_id"] == "id-agent-0"


def test_unplaced_processes_go_last_in_their_own_group() -> None:
    groups = host_groups(process_rows(job(hosts={0: "agent-0"})))
    assert [(g["host"], g["placed"]) for g in groups] == [("agent-0", True), (UNPLACED, False)]
    assert groups[1]["procs"] == [1, 2, 3, 4, 5]


def test_edges_come_from_the_plan_and_know_when_they_cross_hosts() -> None:
    d = job_detail(job(hosts=SPLIT), [], None, None)
    edges = {(e["src"], e["dst"]): e for e in d["edges"]}
    # Downpour: worker processes 0-3 talk to both server processes 4 and 5
    assert set(edges) == {(w, s) for w in range(4) for s in (4, 5)}
    assert not edges[(0, 4)]["cross"] and edges[(0, 5)]["cross"] and edges[(2, 5)]["cross"] is False
    assert all(e["bytes_per_step"] > 0 for e in d["edges"])


def test_process_rows_carry_agent_state_and_log_links() -> None:
    rows = process_rows(job(hosts=SPLIT))
    p2 = rows[2]
    assert (p2["hostname"], p2["state"], p2["workers"], p2["servers"]) == ("agent-1", "TASK_RUNNING", [[1, 0]], [])
    assert p2["logs"]["stdout"] == "/ui/log?agent=id-agent-1&task=dp-1.proc-2.a1&file=stdout"
    assert process_rows(job(hosts={}))[0]["logs"] is None


def test_a_waiting_job_says_why_and_a_running_one_does_not() -> None:
    reason = "0/2 agents can host process 0: agent-0: insufficient cpus (1 needed, 0.5 free)"
    waiting = job_row(job(state=JobState.WAITING, waiting_reason=reason), None, None)
    assert waiting["waiting_reason"] == reason and waiting["steps_per_s"] is None
    running = job_row(job(hosts=SPLIT, waiting_reason="stale text"), Summary(120, 0.5, 0.8, 900.0, 0.7), 3.0)
    assert running["waiting_reason"] == "" and running["steps_per_s"] == 3.0
    assert (running["step"], running["loss"], running["test_accuracy"], running["nhosts"]) == (120, 0.5, 0.7, 2)


def test_a_finished_job_reports_its_final_result() -> None:
    done = job(state=JobState.FINISHED, result={"final": {"steps": 600, "test_accuracy": 0.97}})
    row = job_row(done, Summary(550, 0.1, 0.9, None, 0.95), 5.0)
    assert (row["step"], row["test_accuracy"], row["steps_per_s"], row["terminal"]) == (600, 0.97, None, True)


def test_restarts_and_state_history_are_in_the_detail() -> None:
    j = job(hosts=SPLIT, restarts=1, restart_reasons=["process 3 exited with status 3: lost peer process 1"],
            history=[(1.0, "WAITING", "submitted"), (2.0, "RUNNING", "every process running")])
    d = job_detail(j, history(), None, None)
    assert d["restart_reasons"] == ["process 3 exited with status 3: lost peer process 1"]
    assert d["events"][-1] == {"at": 2.0, "state": "RUNNING", "why": "every process running"}
    assert len(d["curves"]["train"]) == 10 and len(d["curves"]["test"]) == 2


def test_framework_metrics_parse_and_count_jobs_by_state() -> None:
    jobs = [job(hosts=SPLIT, restarts=2), job(job_id="w-1", state=JobState.WAITING),
            job(job_id="f-1", state=JobState.FINISHED)]
    summaries = {"dp-1": Summary(120, 0.5, 0.8, 900.0, 0.7), "w-1": None, "f-1": None}
    fams = parse_exposition(render(framework_metrics(jobs, summaries, {"dp-1": 4.5})))
    assert fams["scylla_framework_jobs"].value(state="RUNNING") == 1.0
    assert fams["scylla_framework_jobs"].value(state="WAITING") == 1.0
    assert fams["scylla_framework_jobs"].value(state="KILLED") == 0.0
    assert fams["scylla_framework_job_restarts_total"].kind == "counter"
    assert fams["scylla_framework_job_restarts_total"].value(job="dp-1") == 2.0
    assert fams["scylla_framework_job_steps_per_second"].value(job="dp-1") == 4.5
    assert fams["scylla_framework_job_steps_per_second"].value(job="w-1") == 0.0
    assert fams["scylla_framework_job_loss"].value(job="dp-1") == 0.5
    assert ("w-1",) not in [tuple(labels.values()) for labels, _ in fams["scylla_framework_job_loss"].values()]
    assert fams["scylla_framework_job_info"].value(job="w-1", name="digits-downpour", state="WAITING",
                                                   policy="spread") == 1.0
