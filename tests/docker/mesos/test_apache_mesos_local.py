"""A real Apache Mesos master and agent on this machine's engine, as `tools/apache_mesos.py local` starts them."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from scylla_singa.cluster import apache_mesos as am


@pytest.fixture(scope="module")
def install() -> am.MesosInstall:
    try:
        return am.find_install()
    except am.MesosError as exc:
        pytest.fail(f"no Apache Mesos install here ({exc})", pytrace=False)


def test_local_master_and_agent_start_register_and_stop_cleanly(install: am.MesosInstall, tmp_path: Path) -> None:
    local = am.local_mesos(install, str(tmp_path), resources="cpus:3;mem:3072")
    try:
        master = local.master_address
        assert am.leader_of([master]) == master
        (agent,) = am.registered_agents(master)
        assert (agent["resources"]["cpus"], agent["resources"]["mem"]) == (3.0, 3072.0)
        agent_flags = requests.get(f"http://{local.agent.address}/flags", timeout=5).json()["flags"]
        assert agent_flags["docker_kill_orphans"] == "false"
        assert agent_flags["work_dir"].startswith(str(tmp_path))
    finally:
        local.stop()
    assert not local.master.running() and not local.agent.running()
