"""Prepare step of the scylla image: dependency wheels built on the host, and a copy of the sources.

Containers cannot reach PyPI over HTTPS here, so scylla-singa's
dependencies are built into wheels on the host (cp311; http-parser's from
the local wheelhouse, see tools/ensure_venv.sh) into the image directory's
git-ignored `wheels/`, keyed by a stamp of the dependency list; the sources
are copied into `src/` and installed from there inside the build.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path


def prepare_scylla(repo_root: Path) -> None:
    """images/scylla: wheels of scylla-singa's dependencies (cp311, built on the host) and a
    copy of the sources (pyproject.toml, README.md, scylla_singa/, policies/) as the build context."""
    image = repo_root / "images" / "scylla"
    pyproject = repo_root / "pyproject.toml"
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"] + ["setuptools>=68", "wheel"]
    wheels, stamp = image / "wheels", image / "wheels" / ".deps-sha256"
    want = hashlib.sha256("\n".join(deps).encode()).hexdigest()
    if not (stamp.exists() and stamp.read_text().strip() == want):
        print("  building scylla-singa's dependency wheels (once)")
        shutil.rmtree(wheels, ignore_errors=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check",
                               "--wheel-dir", str(wheels), "--find-links", str(repo_root / ".cache" / "wheelhouse"),
                               *deps], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"pip wheel failed (run `make venv` first for the http-parser wheel):\n"
                               f"{proc.stderr[-2000:]}")
        stamp.write_text(want + "\n")
    src = image / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(repo_root / name, src / name)
    # policies/ is the built-in policies' package (pyproject.toml maps it into scylla_singa.placement).
    for name in ("scylla_singa", "policies"):
        shutil.copytree(repo_root / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
