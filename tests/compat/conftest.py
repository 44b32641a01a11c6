"""Fixtures for the third-party Mesos clients (tools/ensure_mesos_clients.sh installs them) against our master.

Every test here is marked `clients`. A client that is not installed is
skipped with the reason and the command that installs it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.support.scylla_home import scylla_home_at
from .client_scenarios import CLIENTS, installed


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "/tests/compat/" in str(item.fspath):
            item.add_marker(pytest.mark.clients)


@pytest.fixture(scope="module")
def process_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMesos]:
    """Our master and one agent that runs tasks as processes (the clients' tasks are plain commands)."""
    if not installed():
        pytest.skip(f"the third-party Mesos clients are not installed in {CLIENTS}: run tools/ensure_mesos_clients.sh")
    with scylla_home_at(tmp_path_factory.mktemp("home")):
        # Insecure on purpose: these suites prove protocol compatibility with clients several of which cannot
        # send credentials (README's compatibility table says which); authentication is proven in tests/security.
        cluster = EmbeddedMesos([{"resources": "cpus:4;mem:4096;disk:1024;ports:[31000-32000]"}], simulate=False,
                                use_docker=False, allocation_interval=0.2, insecure=True,
                                # The clients declare user "root" (mesos-go's default) or none (the agent's own
                                # user, root): started as an operator would for them (tests/security proves the
                                # refusal).
                                allow_root_tasks=True).start()
        yield cluster
        cluster.stop()
