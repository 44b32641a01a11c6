"""Shared test configuration: paths, markers by directory, and the leak check."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Everything under tests/docker needs the engine: mark it so `-m "not docker"` runs the rest."""
    for item in items:
        if "/tests/docker/" in str(item.fspath):
            item.add_marker(pytest.mark.docker)
        if "/tests/security/" in str(item.fspath):
            item.add_marker(pytest.mark.security)
