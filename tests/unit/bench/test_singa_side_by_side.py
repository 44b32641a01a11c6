"""bench/singa_side_by_side.py's pure parts: the confs, reading both runtimes' output, steps/s, CPU, ratios."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.report import render_section
from bench.singa_side_by_side import (CONFS, REPO, RUNTIMES, Report, accuracy_curve, by_hand_command, cpu_seconds,
                                      framework_args, glog_reports, measure, prepare_conf, progress_reports, ratios,
                                      section, set_top_level, steps_per_s, why_run_failed)

GLOG = """\
I20261203 14:00:00.000000    10 cluster.cc:50] proc #0 -> tcp://10.0.0.2:5000 (pid = 7)
I20261203 14:00:01.000000    10 worker.cc:199] Test @ step 0
I20261203 14:00:01.100000    10 worker.cc:201]   Loss = 2.3, accuracy = 0.1
I20261203 14:00:02.000000    10 worker.cc:180] Train @ step 50  Loss = 1.0, accuracy = 0.7
I20261203 14:00:02.000100    10 worker.cc:180] Train @ step 50  Loss = 1.0, accuracy = 0.7
I20261203 14:00:03.000000    10 worker.cc:180] Train @ step 100  Loss = 0.5, accuracy = 0.8
I20261203 14:00:04.000000    10 worker.cc:199] Test @ step 100
W20261203 14:00:04.500000    10 blob.cc:10] something unrelated in between
I20261203 14:00:05.000000    10 worker.cc:201]   Loss = 0.3, accuracy = 0.9
I20261203 14:00:07.000000    10 worker.cc:180] Train @ step 150  Loss = 0.4, accuracy = 0.85
"""


def timed(text: str, start: float = 1000.0) -> list[tuple[float, str]]:
    """Lines arriving one second apart."""
    return [(start + i, line) for i, line in enumerate(text.splitlines())]


def test_glog_displays_become_reports_with_samples_per_s_from_glogs_own_clock() -> None:
    reports = glog_reports(timed(GLOG), batchsize=64)
    assert [(r.phase, r.step, r.accuracy) for r in reports] == [
        ("test", 0, 0.1), ("train", 50, 0.7), ("train", 100, 0.8), ("test", 100, 0.9), ("train", 150, 0.85)]
    rates = [r.samples_per_s for r in reports if r.phase == "train"]
    # 50 steps x 64 in 1 s of glog time (not 2 s of arrival: the repeated step-50 display is one display),
    # then 50 x 64 in the 4 s that include the test
    assert rates == [None, pytest.approx(3200.0), pytest.approx(800.0)]
    assert reports[0].t == 1002.0   # arrival of the metrics line, not of `Test @ step 0`


def test_progress_lines_become_reports_and_other_lines_are_ignored() -> None:
    out = timed('singa: starting\nPROGRESS {"step": 50, "phase": "train", "accuracy": 0.5, "samples_per_s": 640.0}\n'
                'PROGRESS {"step": 200, "phase": "test", "accuracy": 0.96, "samples_per_s": null}\nFINAL {}\n')
    assert progress_reports(out) == [Report(1001.0, "train", 50, 0.5, 640.0), Report(1002.0, "test", 200, 0.96)]


def test_steps_per_s_leaves_the_first_display_out_and_weights_each_by_its_steps() -> None:
    reports = [Report(1, "train", 50, None, 1.0), Report(2, "train", 100, None, 6400.0),   # 50 steps in 0.5 s
               Report(3, "test", 100, 0.9), Report(4, "train", 200, None, 640.0)]         # 100 steps in 10 s
    assert steps_per_s(reports, batchsize=64) == pytest.approx(150 / 10.5)
    assert steps_per_s(reports[:1], batchsize=64) is None
    assert steps_per_s([Report(1, "train", 50, None), Report(2, "train", 100, None)], batchsize=64) is None


def test_the_curve_is_one_accuracy_per_test_step_the_last_report_winning() -> None:
    reports = [Report(1, "test", 200, 0.5), Report(2, "train", 250, 0.99), Report(3, "test", 0, 0.1),
               Report(4, "test", 200, 0.6), Report(5, "test", 400, None)]
    assert accuracy_curve(reports) == [(0, 0.1), (200, 0.6)]


def test_a_run_is_measured_from_its_launch() -> None:
    reports = [Report(103.5, "test", 0, 0.1), Report(105.0, "train", 50, 0.5, 100.0),
               Report(106.0, "train", 100, 0.6, 3200.0)]
    m = measure(reports, launched=100.0, ended=110.0, cpu_s=6.0, train_steps=600, batchsize=64)
    assert m["first_report_s"] == 3.5 and m["wall_s"] == 10.0
    assert m["cpu_s_per_step"] == pytest.approx(0.01)
    assert m["steps_per_s"] == pytest.approx(50.0) and m["arrival_steps_per_s"] == pytest.approx(50.0)
    assert m["curve"] == [(0, 0.1)]
    nothing = measure([], launched=100.0, ended=101.0, cpu_s=None, train_steps=600, batchsize=64)
    assert nothing["first_report_s"] is None and nothing["cpu_s_per_step"] is None and nothing["steps_per_s"] is None


def test_cpu_time_is_read_from_cgroup_v1_and_v2_files() -> None:
    assert cpu_seconds("1500000000\n", "cpuacct.usage") == 1.5
    assert cpu_seconds("usage_usec 2500000\nuser_usec 2000000\n", "cpu.stat") == 2.5
    with pytest.raises(ValueError):
        cpu_seconds("user_usec 1\n", "cpu.stat")


def test_the_mnist_conf_reads_its_data_from_the_workspace_and_is_shortened_the_digits_conf_is_unchanged() -> None:
    digits, mnist = CONFS
    text = (REPO / digits.path).read_text()
    assert prepare_conf(digits, text, 240) == text
    out = prepare_conf(mnist, (REPO / mnist.path).read_text(), 240)
    assert "/data/mnist-shaped" not in out and '"/workspace/mnist-shaped/digits-as-mnist-train.bin"' in out
    assert "\ntrain_steps: 240\n" in out and "test_freq:60" in out
    with pytest.raises(ValueError, match="train_steps"):
        set_top_level("name: \"x\"\n", "train_steps", 5)


def run_row(conf: str, runtime: str, way: str, **numbers) -> dict:
    return {"conf": conf, "runtime": runtime, "image": f"{runtime}:latest", "way": way, "repeat": 0,
            "first_report_s": 3.0, "wall_s": 10.0, "steps_per_s": 100.0, "cpu_s": 6.0, "cpu_s_per_step": 0.01,
            "mem_peak_mb": 250.4, "curve": [(0, 0.1), (200, 0.9)], **numbers}


def test_ratios_are_singa_py_over_singa_and_framework_over_by_hand_from_the_same_run() -> None:
    runs = [run_row("c", "singa", "framework", wall_s=12.0, first_report_s=6.0),
            run_row("c", "singa", "by hand", wall_s=8.0, first_report_s=2.0),
            run_row("c", "singa-py", "framework", steps_per_s=50.0, cpu_s_per_step=0.03),
            run_row("c", "singa-py", "by hand", steps_per_s=25.0),
            run_row("c", "singa-py", "by hand", steps_per_s=1e9, error="RuntimeError: boom")]
    r = ratios(runs, "c")
    assert r["py_over_singa_steps_per_s"] == 0.5 and r["py_over_singa_steps_per_s_by_hand"] == 0.25
    assert r["py_over_singa_cpu_per_step"] == pytest.approx(3.0)
    assert r["singa_framework_over_by_hand_wall_s"] == 1.5 and r["singa_framework_minus_by_hand_wall_s"] == 4.0
    assert r["singa_framework_over_by_hand_first_report_s"] == 3.0
    assert ratios(runs, "other")["py_over_singa_steps_per_s"] is None


def test_the_section_has_every_image_and_way_and_says_which_run_failed() -> None:
    runs = [run_row("digits-mlp", rt, way) for rt in ("singa", "singa-py") for way in ("framework", "by hand")]
    runs[-1] = {**runs[-1], "error": "RuntimeError: docker run of singa-py:latest exited 2"}
    data = {"confs": {"digits-mlp": {"title": "digits MLP", "path": "examples/digits-mlp/job.conf",
                                     "train_steps": 600}}, "runs": runs, "repeats": 1,
            "images": {"singa:latest": "sha256:1", "singa-py:latest": "sha256:2"}}
    s = section(data)
    text = render_section(s)
    assert "failed: RuntimeError: docker run of singa-py:latest exited 2" in text
    assert ("| digits MLP | singa:latest | framework | 3.00 s | 10.0 s | 100 | 6.00 s | 10.0 ms | 250 MB "
            "| 0.900 (step 200) |") in text
    assert "0: 0.100, 200: 0.900" in text and "Noisy" in text
    assert [h.ratio for h in s.headline] == ["1.00x", "1.00x"]
    assert len(s.plots) == 1 and len(s.plots[0].series) == 3


def test_by_hand_runs_each_images_own_program_with_the_framework_tasks_cpu_shares() -> None:
    singa, py = RUNTIMES
    cmd = by_hand_command(singa, "n1", Path("/h/c.conf"), Path("/h/ws"), 2048, 0)
    assert cmd[:3] == ["docker", "run", "--rm"] and "--memory" not in cmd
    assert cmd[cmd.index("--cpu-shares") + 1] == "2048" and "GLOG_logtostderr=1" in cmd
    assert cmd[-4:] == ["singa:latest", "singa-local", "-conf", "/conf/job.conf"]
    assert "/h/c.conf:/conf/job.conf:ro" in cmd and "/h/ws:/workspace" in cmd
    cmd = by_hand_command(py, "n2", Path("/h/c.conf"), Path("/h/ws"), 2048, 1024)
    assert cmd[cmd.index("--memory") + 1] == "1024m" and cmd[-4:-2] == ["singa-py:latest", "singa"]


def test_the_framework_run_names_the_runtime_restarts_nothing_and_sets_memory_only_when_asked() -> None:
    singa, py = RUNTIMES
    args = framework_args(singa, Path("/h/c.conf"), Path("/h/ws"), 0)
    assert args[:2] == ["run", "--json"] and "--master" not in args and "--mem" not in args
    assert args[args.index("--runtime") + 1] == "apache-singa" and args[args.index("--max-restarts") + 1] == "0"
    assert args[-1] == "/h/c.conf"
    args = framework_args(py, Path("/h/c.conf"), Path("/h/ws"), 1024)
    assert args[args.index("--mem") + 1] == "1024" and args[args.index("--runtime") + 1] == "singa-py"


def test_a_failed_run_is_told_by_the_line_that_says_why() -> None:
    stdout = ("started an embedded Mesos master at 127.0.0.1:1 with one agent\n"
              "mlp-1af172: FAILED: process 0 on vm: TASK_FAILED - Memory limit exceeded (limit 416 MB)\n"
              "  [stderr] singa: training from step 0\n{\"job\": \"mlp-1af172\", \"state\": \"FAILED\"}\n")
    assert why_run_failed(stdout, "") == ("mlp-1af172: FAILED: process 0 on vm: TASK_FAILED - Memory limit exceeded "
                                          "(limit 416 MB)")
    assert why_run_failed("", "a\nb\nc\nd\n") == "b | c | d"
