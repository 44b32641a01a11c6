"""End-to-end fixtures: `scylla-singa` as a subprocess with a SCYLLA_HOME of its own (tests.support.scylla_cli)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.scylla_cli import ScyllaCli


@pytest.fixture
def scylla(tmp_path: Path, docker_client, swarm_manager) -> Iterator[ScyllaCli]:
    s = ScyllaCli(tmp_path / "home", docker_client, tmp_path)
    yield s
    s.cleanup()
