"""bench/singa_examples.py's pure parts: reading singa-task's PROGRESS lines, the README table and its markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.singa_examples import (BY_HAND, EXAMPLES, MARKERS, merge, metric_curve, number, progress_lines, readme_header,
                                  table, write_readme)

LOG = """singa-task: starting
PROGRESS {"step": 0, "phase": "test", "metrics": {"squared_error": 117.0}}
PROGRESS {"step": 100, "phase": "train", "metrics": {"squared_error": 40.0}}
not a progress line
PROGRESS {"step": 500, "phase": "test", "metrics": {"squared_error": 9.5}}
PROGRESS {"step": 500, "phase": "test", "metrics": {"squared_error": 9.0}}
"""


def measured(key: str, **fields) -> dict:
    ex = next(e for e in EXAMPLES if e.key == key)
    return {"key": key, "title": ex.title, "conf": ex.conf, "phase": ex.phase, "metric": ex.metric, "exit": 0,
            "wall_s": 61.2, "procs": 1, "steps": 6000, "singa_wall_s": 50.4, "first": (0, 117.0),
            "last": (5500, 1.77), **fields}


def test_a_metric_curve_is_one_value_per_step_of_one_phase_the_last_display_winning() -> None:
    assert metric_curve(progress_lines(LOG), "test", "squared_error") == [(0, 117.0), (500, 9.0)]
    assert metric_curve(progress_lines(LOG), "test", "accuracy") == []


def test_the_table_has_every_example_measured_or_marked_by_hand() -> None:
    rows = table([measured("rbm1")]).splitlines()[2:]
    assert len(rows) == len(EXAMPLES) == len(BY_HAND)
    rbm1 = next(r for r in rows if "`rbm/rbm1.conf`" in r)
    assert "`scylla-singa run`" in rbm1 and "1.77 at step 5,500 of 6,000 (117 at step 0)" in rbm1
    assert "61 s" in rbm1 and "50 s" in rbm1 and "by hand" not in rbm1
    others = [r for r in rows if r is not rbm1]
    assert all("**by hand**" in r for r in others), others


def test_a_run_that_failed_says_so_in_the_table() -> None:
    row = next(r for r in table([measured("mnist-mlp", exit=1, error="boom", last=None)]).splitlines()
               if "mnist-mlp" in r)
    assert "did not finish (exit 1)" in row


def test_a_partial_run_replaces_only_its_examples_in_example_order() -> None:
    merged = merge([measured("rbm2", wall_s=1.0), measured("rbm1", wall_s=2.0)], [measured("rbm1", wall_s=3.0)])
    assert [(r["key"], r["wall_s"]) for r in merged] == [("rbm1", 3.0), ("rbm2", 1.0)]


def test_the_readme_table_goes_between_the_markers_and_nowhere_else(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{MARKERS[0]}\nold table\n{MARKERS[1]}\nafter\n")
    write_readme([measured("rbm1")], "Measured now.", readme)
    text = readme.read_text()
    assert text.startswith(f"before\n{MARKERS[0]}\nMeasured now.\n\n| Example |") and text.endswith(
        f"{MARKERS[1]}\nafter\n")
    assert "old table" not in text
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit, match="markers"):
        write_readme([], "x", readme)


@pytest.mark.parametrize("value, text", [(1.002564, "1.00"), (0.968, "0.968"), (12.85, "12.8"), (116.8, "117"),
                                         (136.546768, "137")])
def test_numbers_keep_three_significant_digits(value: float, text: str) -> None:
    assert number(value) == text


def test_the_header_names_every_run_whose_rows_the_table_keeps() -> None:
    record = {"generated": "T2", "load_at_start": "2.0", "image": "singa:latest",
              "examples": [measured("mnist-mlp", measured="T1", load="9.7"), measured("rbm1", measured="T1", load="9.7"),
                           measured("cifar10")]}     # a row of the run that wrote the record: its time and load
    header = readme_header(record)
    assert "T1 (load average 9.7): mnist-mlp, rbm1; T2 (load average 2.0): cifar10." in header, header


def test_an_example_gets_the_run_options_it_needs() -> None:
    by_key = {e.key: e for e in EXAMPLES}
    assert by_key["rnnlm"].run_args() == ["--env", "SCYLLA_SINGA_LOCAL_BIN=singa-rnnlm"]
    assert by_key["cifar10-hybrid"].run_args() == ["--cpus", "2"]    # 3 threads planned, 2 cores here
    assert by_key["mnist-mlp"].run_args() == []
