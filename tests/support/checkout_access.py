"""Whether user nobody can use this checkout: tasks, executors and the local-user checks run as nobody from it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

NOBODY = "65534"


def nobody_import_error(python: str, module: str, env: dict[str, str] | None = None) -> str | None:
    """What stops user nobody from importing `module` with `python` (its last error line), or None when it can."""
    probe = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python, "-c",
                            f"import {module}"], cwd="/", capture_output=True, text=True, timeout=60, env=env)
    if probe.returncode == 0:
        return None
    lines = probe.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit {probe.returncode}"


def closed_directory(path: Path) -> Path | None:
    """The nearest of `path` and its parents that other users may not enter (no o+x), or None."""
    return next((d for d in (path, *path.parents) if not os.stat(d).st_mode & 0o001), None)
