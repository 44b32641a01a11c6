"""The framework's shell on pymesos's real driver against the embedded master with simulated agents.

No Docker: job networks are skipped (no swarm manager is passed) and the
simulated agents run `sleep N` / `exit K` commands, which is all these
tests need to drive gangs, failures and restarts through real Mesos calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from .harness import Harness


@pytest.fixture
def cluster_factory(tmp_path: Path) -> Iterator[Callable[..., Harness]]:
    started: list[tuple[EmbeddedMesos, Harness]] = []

    def make(agents: list[str], gang_timeout_s: float = 30.0) -> Harness:
        specs = [AgentSpec(resources=r, hostname=f"sim-{i}", simulate=True) for i, r in enumerate(agents)]
        mesos = EmbeddedMesos(specs, simulate=True, allocation_interval=0.2, work_dir=tmp_path / "mesos",
                              allowed_host_paths=[tmp_path]).start()
        harness = Harness(mesos, tmp_path, gang_timeout_s)
        started.append((mesos, harness))
        return harness.start()

    yield make
    for mesos, harness in started:
        harness.shell.stop(teardown=True)
        mesos.stop()
