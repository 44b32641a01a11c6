"""`.ci/run` from a clone other users cannot reach tests a copy in an open directory, and removes it."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run_ci(base: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """`.ci/run` of a fake checkout under `base`, with a `make` that records where it ran."""
    checkout = base / "clone"
    (checkout / ".ci").mkdir(parents=True)
    shutil.copy2(REPO / ".ci" / "run", checkout / ".ci" / "run")
    (checkout / "marker").write_text("in the copy too")
    stub = base / "bin"
    stub.mkdir()
    record = base / "make-ran-in"
    (stub / "make").write_text(f"#!/bin/sh\n[ -f marker ] || exit 3\npwd > {record}\necho \"make $*\"\n")
    (stub / "make").chmod(0o755)
    env = {**os.environ, "PATH": f"{stub}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(checkout / ".ci" / "run")], env=env, capture_output=True, text=True,
                          timeout=60)
    return done, Path(record.read_text().strip()) if record.exists() else Path()


def test_a_clone_in_a_closed_directory_is_tested_from_a_copy_that_is_removed() -> None:
    base = Path(tempfile.mkdtemp(prefix="scylla-ci-run-"))   # 0700, as a `mktemp -d` is
    try:
        done, ran_in = _run_ci(base)
        assert done.returncode == 0, done.stderr
        assert "make test" in done.stdout and f"{base} is closed to other users" in done.stdout
        assert ran_in.name == "repo" and ran_in.parent.parent == Path("/var/tmp")
        assert not ran_in.parent.exists()        # the copy is gone afterwards
    finally:
        shutil.rmtree(base)


def test_a_clone_every_user_can_reach_is_tested_in_place() -> None:
    base = Path(tempfile.mkdtemp(prefix="scylla-ci-run-"))
    try:
        base.chmod(0o755)
        done, ran_in = _run_ci(base)
        assert done.returncode == 0, done.stderr
        assert ran_in == base / "clone" and "closed" not in done.stdout
    finally:
        shutil.rmtree(base)
