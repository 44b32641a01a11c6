"""Where scylla-singa keeps its state on this machine ($SCYLLA_HOME)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = "/var/lib/scylla-singa"


def home_path() -> Path:
    """$SCYLLA_HOME, default /var/lib/scylla-singa (not created)."""
    return Path(os.environ.get("SCYLLA_HOME", DEFAULT_HOME))


def scylla_home() -> Path:
    """$SCYLLA_HOME, created on first use."""
    home = home_path()
    home.mkdir(parents=True, exist_ok=True)
    return home


def jobs_root() -> Path:
    return scylla_home() / "jobs"


def allowed_roots() -> tuple[Path, ...]:
    """Roots volume delivery may mount from: $SCYLLA_ALLOWED_ROOTS (colon-separated), default $SCYLLA_HOME/jobs."""
    raw = os.environ.get("SCYLLA_ALLOWED_ROOTS")
    if raw:
        return tuple(Path(p) for p in raw.split(":") if p)
    return (jobs_root(),)


def home_refusal(exc: OSError) -> str:
    """What to tell a user whose command cannot reach $SCYLLA_HOME (it belongs to the framework's user)."""
    return (f"cannot use SCYLLA_HOME={home_path()} ({exc.strerror or exc}): it belongs to the user who runs the "
            "framework (root, as a rule); run this command as that user, or set SCYLLA_HOME to a directory of yours")
