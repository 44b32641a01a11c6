"""`make setup` on a machine where everything is in place changes nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def test_setup_rerun_is_a_no_op() -> None:
    venv_python = REPO / ".venv" / "bin" / "python"
    before = venv_python.stat().st_mtime_ns
    proc = subprocess.run(["make", "--no-print-directory", "setup"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    image_lines = [line for line in out.splitlines() if line.startswith("  ") and "(" in line]
    assert image_lines and all(" cached " in line for line in image_lines), out
    for noisy in ("installing", "building http-parser", "starting dockerd", "debootstrap"):
        assert noisy not in out, out
    assert venv_python.stat().st_mtime_ns == before
