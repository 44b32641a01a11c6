"""Shared test configuration: paths, markers by directory, and the leak check."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.checkout_access import closed_directory, nobody_import_error

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/docker needs the engine: mark it so `-m "not docker"` runs the rest."""
    for item in items:
        if "/tests/docker/" in str(item.fspath):
            item.add_marker(pytest.mark.docker)
        if "/tests/security/" in str(item.fspath):
            item.add_marker(pytest.mark.security)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop at once, saying why, when user nobody cannot import this checkout's package with its Python.

    Why: the tests run custom executors from tests/support and the CLI (the
    local-user checks) as nobody (uid 65534) from this checkout's .venv; in a
    directory only root may enter (`mktemp -d`, a home of mode 0700) they
    fail later as TASK_FAILED or "No module named scylla_singa", far from
    the cause. (.ci/run tests a copy in an open directory instead.)
    """
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return
    error = nobody_import_error(sys.executable, "scylla_singa")
    if error is not None:
        closed = closed_directory(REPO)
        raise pytest.UsageError(
            f"user nobody (65534) cannot import scylla_singa from {REPO} with {sys.executable}: {error}. "
            "The tests run tasks and executors as nobody from this checkout; "
            + (f"{closed} is closed to other users (`chmod o+x {closed}`, or clone elsewhere)." if closed else
               "make the checkout and its .venv readable by other users."))
