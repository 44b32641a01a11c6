"""Clusters for avmesos-cli's `task exec` and `task attach` tests: one agent and a framework to launch the
task the CLI reaches, and the CLI's config and environment (its script runs `python` from PATH: the
clients' venv first)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scylla_singa.mesos.embedded import EmbeddedMesos
from tests.compat.client_scenarios import CLIENTS
from tests.support.mesos_framework import TestFramework
from tests.support.scylla_home import scylla_home_at

MESOS_CLI = str(CLIENTS / "venv" / "bin" / "mesos-cli")


def cli_env(config: Path) -> dict[str, str]:
    return {**os.environ, "MESOS_CLI_CONFIG": str(config), "PATH": f"{CLIENTS / 'venv' / 'bin'}:{os.environ['PATH']}"}


@contextmanager
def process_agent(home: Path, cli_dir: Path, name: str) -> Iterator[tuple[EmbeddedMesos, TestFramework, Path]]:
    """An insecure cluster with one agent running processes (its work dir searchable by every user, as
    /var/lib/mesos is, so tasks run as nobody reach their sandboxes) and a started framework; (the cluster,
    the framework, the CLI's config in `cli_dir`)."""
    work = tempfile.mkdtemp(prefix="scylla-cli-")
    os.chmod(work, 0o711)
    with scylla_home_at(home):
        cluster = EmbeddedMesos(1, simulate=False, use_docker=False, allocation_interval=0.2, insecure=True,
                                work_dir=work).start()
        framework = TestFramework(cluster.master_address, name=name).start()
        try:
            config = cli_dir / "config.toml"
            config.write_text(f'[master]\naddress = "{cluster.master_address}"\n')
            yield cluster, framework, config
        finally:
            framework.stop()
            cluster.stop()
            shutil.rmtree(work, ignore_errors=True)


@contextmanager
def docker_agent(docker_client: Any, cli_dir: Path, name: str
                 ) -> Iterator[tuple[EmbeddedMesos, TestFramework, Path, Path]]:
    """A secure cluster with one Docker agent and a started framework; (the cluster, the framework, a CLI
    config with the cluster's credential for master and agent, one with it for the master only)."""
    m = EmbeddedMesos([{"resources": "cpus:4;mem:4096;ports:[31000-31100]", "hostname": name}],
                      docker_client=docker_client, allocation_interval=0.2, retry_interval=0.5)
    with m:
        framework = TestFramework(m.master_address, name=name, credential=m.framework_credential).start()
        try:
            principal, secret = m.http_auth
            master = f'[master]\naddress = "{m.master_address}"\nprincipal = "{principal}"\nsecret = "{secret}"\n'
            secure, anonymous = cli_dir / "secure.toml", cli_dir / "anonymous.toml"
            secure.write_text(f'{master}[agent]\nprincipal = "{principal}"\nsecret = "{secret}"\n')
            anonymous.write_text(master)
            yield m, framework, secure, anonymous
        finally:
            framework.stop()
