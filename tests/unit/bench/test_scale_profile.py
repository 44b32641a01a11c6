"""The profile runner records each run faithfully and refuses a wrong checkout before it starts anything.

Issue 17's before/after figures come from its records
(bench/results/scale_profile_runs.jsonl); a record that took the wrong
median, or a --before that silently ran this checkout twice, would make the
ratio it reports a lie.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench import scale_profile

REPO = Path(__file__).resolve().parents[3]


def test_a_run_record_keeps_the_commit_rate_costs_and_median_probe() -> None:
    run = {"code": {"commit": "6ce1dcb"}, "agents": 50000, "tasks_finished_per_s": 1659.04,
           "ms_per_task": {"master": 0.47, "fleet": 0.21}, "load_average": ["1.10 0.90 0.80", "1.9 1.2 0.9"],
           "probes": [{"overhead_s": 0.03}, {"overhead_s": None}, {"overhead_s": 0.01}, {"overhead_s": 0.9},
                      {"overhead_s": 0.02}],
           "error": None}
    record = scale_profile.run_record("2026-12-07 12:00:00 UTC", "after", run)
    assert record == {"started_at": "2026-12-07 12:00:00 UTC", "order": "after", "commit": "6ce1dcb",
                      "agents": 50000, "tasks_finished_per_s": 1659.0,
                      "ms_per_task": {"master": 0.47, "fleet": 0.21}, "load_average": "1.10 0.90 0.80",
                      # the four measured overheads sorted: 0.01 0.02 0.03 0.9; the one without is left out
                      "probe_median_s": 0.03, "error": None}


def test_a_run_that_failed_before_any_probe_is_still_recorded_with_its_error() -> None:
    record = scale_profile.run_record("t", "before", {"error": "master did not start"})
    assert record["commit"] == "?" and record["probe_median_s"] is None and record["tasks_finished_per_s"] == 0
    assert record["error"] == "master did not start"


def test_a_before_that_is_not_a_checkout_is_refused_with_exit_2(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bench.scale_profile", "--parts", "", "--before", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert f"--before {tmp_path}: not a checkout of scylla-singa" in done.stderr
    assert "Traceback" not in done.stderr
