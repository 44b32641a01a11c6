"""Rendering docs/benchmarks.md from results (pure parts), and each benchmark's summary of raw data."""

from __future__ import annotations

import json

import pytest

from bench import allocation, launch, network, placement, scale, training
from bench.report import (ORDER, Headline, Plot, Section, Series, Table, build_sections, draw_plot, headline_table,
                          render_markdown, render_section, render_table, write_report)


def test_table_renders_as_github_markdown_and_escapes_pipes() -> None:
    text = render_table(Table(["a", "b|c"], [["1", "x|y"], ["2"]], caption="Cap:"))
    assert text.splitlines() == ["Cap:", "", "| a | b\\|c |", "|---|---|", "| 1 | x\\|y |", "| 2 |  |"]


def test_a_row_longer_than_the_header_is_an_error() -> None:
    with pytest.raises(ValueError):
        render_table(Table(["a"], [["1", "2"]]))


def test_headline_collects_every_sections_rows_in_order() -> None:
    s1 = Section("a", "A", headline=[Headline("first", "1 s", "anchor", "0.50x", "<= 2 s", "met")])
    s2 = Section("b", "B", headline=[Headline("second", "2 s", "anchor", "2.00x", "<= 1 s", "missed")])
    rows = headline_table([s1, s2]).rows
    assert [r[0] for r in rows] == ["first", "second"] and rows[1][-1] == "missed"


def test_section_shows_tables_plots_notes_and_how_it_was_run() -> None:
    s = Section("x", "9. Thing", "Intro.", [Table(["k"], [["v"]])],
                [Plot("bench-x.png", "The plot", "x", "y", [Series("s", [1], [2.0])])],
                ["a note", "- already a bullet"], run_info="Measured today.")
    text = render_section(s)
    assert text.startswith("## 9. Thing\n\nIntro.\n\n| k |")
    assert "![The plot](bench-x.png)" in text and "- a note\n- already a bullet" in text
    assert text.rstrip().endswith("_Measured today._")


def test_whole_page_names_the_machine_date_and_command() -> None:
    page = render_markdown([Section("a", "A", headline=[Headline("h", "m", "an", "1.00x", "g", "met")])],
                           {"cores": 2, "memory": "23.4 GiB", "kernel": "6.1", "python": "3.11.2"},
                           "2025-01-01 10:00 UTC", "python -m bench.run --size quick")
    assert "Generated 2025-01-01 10:00 UTC by `python -m bench.run --size quick`." in page
    assert "| Cores | 2 |" in page and "| Kernel | 6.1 |" in page and "| h | m | an | 1.00x | g | met |" in page


def test_missing_and_failed_results_are_reported_as_not_measured(tmp_path) -> None:
    (tmp_path / "allocation.json").write_text(json.dumps({"name": "allocation", "error": "Boom: no engine",
                                                          "started_at": "now", "duration_s": 3, "size": "quick",
                                                          "command": "c"}))
    sections = build_sections({"allocation": json.loads((tmp_path / "allocation.json").read_text())})
    assert [s.name for s in sections] == list(ORDER)
    assert "the run failed: Boom: no engine" in sections[0].intro
    assert "has not been run yet" in sections[1].intro
    assert all(s.headline[0].result == "not measured" for s in sections)


def test_write_report_draws_plots_and_writes_the_page(tmp_path) -> None:
    results, docs = tmp_path / "results", tmp_path / "docs"
    results.mkdir()
    data = {"anchor_s": 1.06, "agent_resources": "", "used_resources": "",
            "points": [{"agents": a, "frameworks": 1000, "scenario": "offer", "round_s": [0.01 * a / 100] * 3,
                        "offers": [a] * 3, "setup_s": 0.1} for a in (100, 10000)]}
    (results / "allocation.json").write_text(json.dumps({"name": "allocation", "data": data, "started_at": "t",
                                                         "duration_s": 1, "size": "quick", "command": "cmd",
                                                         "finished_at": "2025", "machine": {"cores": 2}}))
    page = write_report(results, docs, command="cmd").read_text()
    assert (docs / "bench-allocation.png").stat().st_size > 1000
    assert "| 10,000 x 1,000 | offer | 3 | 1.00 s |" in page and "0.94x" in page


def test_draw_plot_bars_with_missing_values(tmp_path) -> None:
    plot = Plot("bench-t.png", "t", "", "y", [Series("a", ["x", "y"], [1.0, None], [0.5, None], [1.5, None])],
                kind="bar", logy=True)
    assert draw_plot(plot, tmp_path).stat().st_size > 1000


# ---- each benchmark summarises its own raw data (tiny synthetic results) ----

def _sample(median: float) -> list[float]:
    return [median * 0.9, median, median * 1.1]


def test_allocation_rows_name_the_mesos_anchor_and_ratio() -> None:
    data = {"anchor_s": 1.06, "agent_resources": "", "used_resources": "", "points": [
        {"agents": 10000, "frameworks": 1000, "scenario": s, "round_s": _sample(0.53), "offers": [10000] * 3}
        for s in ("offer", "decline")]}
    s = allocation.section(data)
    assert s.tables[0].rows[0][-2].startswith("Mesos 1.7") and s.tables[0].rows[0][-1] == "0.50x"
    assert s.headline[0].result == "met"


def test_scale_reports_where_it_stopped() -> None:
    ok = {"agents": 1000, "probes": [{"overhead_s": x, "times": {"offered": 0.01}} for x in _sample(0.05)],
          "cpu_percent": {"master": 10}, "rss_mb": {"master": 70}, "register_s": 2, "tasks_finished_per_s": 30,
          "duplicate_updates": 0, "updates": 100}
    bad = {"agents": 20000, "error": "TimeoutError: 20000 agents to register not within 260s"}
    data = {"anchor_s": 1.0, "config": {"frameworks": 200, "probes": 3, "warmup_s": 5}, "agent_resources": "r",
            "points": [ok, bad], "stopped": "at 20,000 agents: TimeoutError", "largest_planned": 50000}
    s = scale.section(data)
    assert s.headline[0].benchmark.startswith("2. Task overhead at 1,000 agents")
    assert s.tables[0].rows[1][-1].startswith("TimeoutError") and "Where it stops here" in s.notes[0]
    assert scale._stop_reason(bad, None).startswith("at 20,000 agents")
    assert scale._stop_reason({**ok, "duplicate_updates": 50}, None).startswith(
        "at 1,000 agents the cluster falls behind: median overhead 0.1 s, 50 status updates resent")


def test_scale_says_which_step_of_the_probe_waited_when_nothing_was_resent() -> None:
    """At the size where the sweep stops with no resends, the note gives the wait of each step (medians)."""
    slow = {"agents": 50000, "probes": [{"overhead_s": 10.0 + i, "times": {"offered": 0.5, "launched": 0.75,
                                                                          "TASK_STARTING": 8.6 + i}}
                                        for i in range(3)],
            "cpu_percent": {"master": 86, "fleet": 44}, "rss_mb": {"master": 70}, "register_s": 2,
            "tasks_finished_per_s": 1500, "duplicate_updates": 0, "updates": 100}
    reason = scale._stop_reason(slow, None)
    assert reason == ("at 50,000 agents the cluster falls behind: median overhead 11.0 s, "
                      "no status update resent (of 100)")
    data = {"anchor_s": 1.0, "config": {"frameworks": 200, "probes": 3, "warmup_s": 5}, "agent_resources": "r",
            "points": [slow], "stopped": reason, "largest_planned": 50000}
    note = scale.section(data).notes[1]
    assert "the offer came after 500 ms; the launch call returned 250 ms later; TASK_STARTING reached the probe " \
        "8.85 s after that." in note, note


def test_placement_flags_a_policy_over_the_goal() -> None:
    pts = [{"policy": p, "offers": 10000, "procs": 64, "place_s": _sample(t), "placed": True, "agents_used": 8}
           for p, t in (("fast", 0.03), ("slow", 0.4))]
    s = placement.section({"goal_s": 0.1, "policies": ["fast", "slow"], "offers": [10000], "procs": [64],
                           "edges": {"64": 2016}, "points": pts})
    assert [r[-1] for r in s.tables[0].rows] == ["met", "missed"]
    assert s.headline[0].result == "missed by slow" and "slow misses the 100 ms goal" in s.notes[0]


def test_launch_ratio_is_framework_over_floor() -> None:
    data = {"goal_ratio": 1.25, "points": [{"n": 4, "framework": _sample(2.0), "floor": _sample(1.0),
                                            "phases": [{"WAITING": 0.1, "RUNNING": 2.0}]}],
            "left_behind": {"containers": 0, "networks": 0}}
    s = launch.section(data)
    assert s.tables[0].rows[0][6] == "2.00x" and s.headline[0].result == "missed"


def test_launch_job_conf_has_n_processes() -> None:
    from scylla_singa.jobconf.parse import parse_job_text
    from scylla_singa.jobconf.plan import plan_job
    assert plan_job(parse_job_text(launch.job_conf(16), "bench.conf")).nprocs == 16


def test_network_without_cross_host_says_why() -> None:
    pair = {"rtt_us": _sample(100.0), "throughput": [{"size": 65536, "mb_per_s": m, "msgs_per_s": m * 15}
                                                     for m in _sample(1000.0)]}
    host = {"rtt_us": _sample(50.0), "throughput": [{"size": 65536, "mb_per_s": m, "msgs_per_s": m * 15}
                                                    for m in _sample(2000.0)]}
    data = {"pairs": {"same host, overlay": pair, "same host, host": host}, "cross_host": {"error": "no root"},
            "runtime": {"4 containers, overlay": _sample(200.0), "4 processes, 1 container": _sample(250.0)}}
    s = network.section(data)
    rows = s.tables[0].rows
    assert rows[0][5] == "2.00x" and rows[1][5] == "0.50x" and "no root" in rows[-1][-1]
    assert s.tables[1].rows[0][-1] == "0.80x" and "Across hosts not measured" in s.notes[0]


def test_network_reads_steps_per_second_from_timestamped_progress_lines() -> None:
    line = '{ts} PROGRESS {{"phase": "train", "group": 0, "worker": 0, "step": {step}}}'
    log = "\n".join([line.format(ts="2025-01-01T00:00:00.000000000Z", step=50),
                     line.format(ts="2025-01-01T00:00:00.500000000Z", step=100), "2025-01-01T00:00:01Z other",
                     line.format(ts="2025-01-01T00:00:01.000000000Z", step=150)])
    assert network.progress_rates(log) == pytest.approx([100.0, 100.0])


def test_training_ratio_and_cost_per_step() -> None:
    data = {"steps": 1000, "batch": 64, "disp": 100, "runs": {
        "runtime": [{"samples_per_s": _sample(320000.0), "test_accuracy": 0.96}],
        "numpy": [{"samples_per_s": _sample(640000.0), "test_accuracy": 0.97}]}}
    s = training.section(data)
    assert s.tables[0].rows[0][-1] == "0.50x" and s.headline[0].result == "framework cost 100 us per step"


def test_a_full_run_replaced_by_a_quick_one_is_kept_as_an_appendix(tmp_path) -> None:
    def result(size: str, when: str, median: float) -> str:
        data = {"anchor_s": 1.06, "agent_resources": "", "used_resources": "", "points": [
            {"agents": 10000, "frameworks": 1000, "scenario": "offer", "round_s": _sample(median),
             "offers": [1] * 3}]}
        return json.dumps({"name": "allocation", "size": size, "data": data, "started_at": when, "duration_s": 1,
                           "command": f"run {size}", "finished_at": when, "machine": {}})
    results, docs = tmp_path / "results", tmp_path / "docs"
    (results / "full").mkdir(parents=True)
    (results / "allocation.json").write_text(result("quick", "2", 0.5))
    (results / "full" / "allocation.json").write_text(result("full", "1", 0.6))
    page = write_report(results, docs).read_text()
    assert "## Full run: 1. Allocation round" in page and (docs / "bench-full-allocation.png").exists()
    head = page.split("## Headline")[1].split("## ")[0]
    assert head.index("500 ms") < head.index("600 ms") < head.index("2. ")
    (results / "allocation.json").write_text((results / "full" / "allocation.json").read_text())
    assert "## Full run" not in write_report(results, docs).read_text()  # the latest is the full run itself


def test_a_profile_run_reports_its_probes_beside_its_cpu_per_task() -> None:
    """CPU per task alone misleads when one side keeps up and the other batches its backlog."""
    run = {"probes": [{"overhead_s": 0.5}, {"overhead_s": 70.0}, {"overhead_s": 1.5}, {"error": "no offer"}]}
    assert scale._probe_note(run) == " Probe overhead median 1.50 s (of 3, up to 70.0 s)."
    assert scale._probe_note({"probes": []}) == "" and scale._probe_note({}) == ""


def _profile_run(commit: str, ms: float, agents: int = 50_000) -> dict:
    return {"agents": agents, "code": {"commit": commit}, "tasks_finished_per_s": 1600.0,
            "ms_per_task": {"master": ms, "fleet": 0.2, "frameworks": 0.3}, "load_average": ["1.0 1.0 1.0"],
            "probes": [{"overhead_s": 0.05}], "kinds": {}}


def _save_profile(tmp_path, runs: list[dict], before_ms: float = 1.8, after_ms: float = 0.49):
    saved = tmp_path / "scale_profile.json"
    saved.write_text(json.dumps({"started_at": "t0", "before": _profile_run("old", before_ms),
                                 "after": _profile_run("new", after_ms)}))
    (tmp_path / scale.RUNS_FILE).write_text("".join(json.dumps(r) + "\n" for r in runs))
    return saved


def test_the_headline_gives_the_spread_of_every_recorded_run_of_the_after_code(tmp_path) -> None:
    """One run's CPU per task moves by several percent: the headline shows where the saved run sits."""
    runs = [{"started_at": f"t{i}", "order": "after", "commit": c, "agents": a, "ms_per_task": {"master": ms}}
            for i, (c, a, ms) in enumerate([("new", 50_000, 0.47), ("new", 50_000, 0.52), ("new", 15_000, 0.9),
                                            ("new with changes", 50_000, 0.3), ("old", 50_000, 1.8)])]
    saved = _save_profile(tmp_path, runs + [{**runs[0], "ms_per_task": {"master": 0.1}, "error": "probe failed"}])
    (headline,) = scale._profile_headline(saved)
    assert headline.measured == "0.490 ms / 1.800 ms (2 runs of new: 0.470 - 0.520 ms)"
    assert headline.result == "met"
    tables, notes = scale.profile_notes(saved)
    assert "(2 runs, table below): the master's CPU per task 0.470 - 0.520 ms, median 0.495 ms." in notes[-1]
    assert len(tables[-1].rows) == 6   # every recorded run is listed, the failed one too


def test_a_saved_run_over_the_goal_is_not_met_and_a_lone_run_has_no_spread(tmp_path) -> None:
    saved = _save_profile(tmp_path, [], after_ms=0.512)
    (headline,) = scale._profile_headline(saved)
    assert headline.measured == "0.512 ms / 1.800 ms" and headline.result == "not met (0.51 ms)"


def test_a_master_whose_socket_calls_were_not_counted_is_not_said_to_make_none() -> None:
    """asyncio's own loop uses send and recv, which /proc/PID/io does not count: 0 calls means uncounted."""
    uncounted = scale._kernel_note({"kernel_share": {"master": 0.06}, "io_calls_per_task": {"master": [0.0, 0.0]}})
    assert "uncounted" in uncounted and "0.0 read" not in uncounted
    counted = scale._kernel_note({"kernel_share": {"master": 0.18}, "io_calls_per_task": {"master": [3.1, 6.3]}})
    assert "3.1 read and 6.3 write system calls per task" in counted
