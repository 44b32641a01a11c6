"""A real Apache Mesos master and agent on this machine's engine, as `tools/apache_mesos.py local` starts them."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from scylla_singa.cluster import apache_mesos as am
from scylla_singa.cluster.launcher import running


@pytest.fixture(scope="module")
def install() -> am.MesosInstall:
    try:
        return am.find_install()
    except am.MesosError as exc:
        pytest.skip(f"no Apache Mesos install here ({exc})")


def test_local_master_and_agent_start_register_and_stop_cleanly(install: am.MesosInstall, tmp_path: Path) -> None:
    cluster = am.up_local(install, str(tmp_path), resources="cpus:3;mem:3072")
    try:
        master = cluster.masters[0]["address"]
        assert am.leader_of([master]) == master
        (agent,) = am.registered_agents(master)
        assert (agent["resources"]["cpus"], agent["resources"]["mem"]) == (3.0, 3072.0)
        agent_flags = requests.get(f"http://{cluster.agents[0]['address']}/flags", timeout=5).json()["flags"]
        assert agent_flags["docker_kill_orphans"] == "false"
        assert agent_flags["work_dir"].startswith(str(tmp_path))
    finally:
        cluster.stop()
    assert not any(running(p["pid"], p["start"]) for p in [*cluster.masters, *cluster.agents])
