"""`scylla-singa ui`: the running frameworks' page addresses, from the store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from click.testing import CliRunner

from scylla_singa.cli import ui_commands
from scylla_singa.framework.store import JobStore
from scylla_singa.ui import running_views
from .builders import job


def test_prints_the_views_that_answer_newest_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    store = JobStore(tmp_path / "framework.sqlite")
    for fid, job_id, at in (("old-fw", "a-1", 1.0), ("gone-fw", "b-1", 2.0), ("new-fw", "c-1", 3.0)):
        j = job(job_id=job_id)
        j.spec = dataclasses.replace(j.spec, submitted_at=at)
        store.save(j, fid)
        store.set_meta(f"api:{fid}", f"http://127.0.0.1:1{at:.0f}")
        store.set_meta(f"master:{fid}", "127.0.0.1:5050")
    monkeypatch.setattr(running_views, "_answers", lambda url: not url.endswith(":12"))
    result = CliRunner().invoke(ui_commands.ui, [])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "framework new-fw" and "job view    http://127.0.0.1:13/" in lines[1]
    assert "master UI   http://127.0.0.1:5050/" in result.output
    assert "gone-fw" not in result.output and "framework old-fw" in result.output


def test_says_so_when_nothing_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    result = CliRunner().invoke(ui_commands.ui, [])
    assert result.exit_code == 1 and "no running scylla-singa" in result.output
