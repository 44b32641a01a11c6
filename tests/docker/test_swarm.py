"""Swarm and per-job overlays against the real engine."""

from __future__ import annotations

import uuid

import docker
import pytest

from scylla_singa.contracts import JOB_LABEL, job_network_name
from scylla_singa.swarm.overlay_check import OverlayCheckError, run_overlay_check
from scylla_singa.swarm.overlays import create_job_network, ensure_swarm, remove_job_network, swarm_state

TINY = "scylla-tiny:latest"


def _job() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


def _exists(client: docker.DockerClient, name: str) -> bool:
    return any(n.name == name for n in client.networks.list(names=[name]))


def test_engine_is_a_swarm_manager_and_ensure_is_idempotent(docker_client, swarm_manager) -> None:
    again = ensure_swarm(docker_client)
    assert again == swarm_manager and again.is_manager
    assert swarm_state(docker_client) == again


def test_job_overlay_is_attachable_labelled_and_removable(docker_client, swarm_manager) -> None:
    job = _job()
    net = create_job_network(docker_client, job)
    try:
        assert net.attrs["Driver"] == "overlay" and net.attrs["Attachable"] is True
        assert net.attrs["Labels"][JOB_LABEL] == job
        assert create_job_network(docker_client, job).id == net.id  # idempotent
    finally:
        assert remove_job_network(docker_client, job) is True
    assert not _exists(docker_client, job_network_name(job))
    assert remove_job_network(docker_client, job) is False  # idempotent


def test_two_containers_resolve_each_other_by_name_and_exchange_bytes(docker_client, swarm_manager) -> None:
    job = _job()
    result = run_overlay_check(docker_client, TINY, job)
    assert result.server_ip.startswith("10.213.")
    assert not _exists(docker_client, result.network)
    assert not docker_client.containers.list(ignore_removed=True, all=True, filters={"label": f"{JOB_LABEL}={job}"})


def test_failed_check_still_removes_containers_and_network(docker_client, swarm_manager) -> None:
    job = _job()
    # the base image has no `nc`: the client cannot connect and the check fails
    with pytest.raises(OverlayCheckError):
        run_overlay_check(docker_client, "debian:bookworm-slim", job, timeout_s=5)
    assert not _exists(docker_client, job_network_name(job))
    assert not docker_client.containers.list(ignore_removed=True, all=True, filters={"label": f"{JOB_LABEL}={job}"})


def test_networks_of_two_jobs_are_separate(docker_client, swarm_manager) -> None:
    a, b = _job(), _job()
    na, nb = create_job_network(docker_client, a), create_job_network(docker_client, b)
    try:
        subnet = lambda n: n.attrs["IPAM"]["Config"][0]["Subnet"]  # noqa: E731
        assert na.id != nb.id and subnet(na) != subnet(nb)
    finally:
        remove_job_network(docker_client, a)
        remove_job_network(docker_client, b)


def test_job_networks_come_from_the_pool_behind_the_isolation_rule(docker_client, swarm_manager) -> None:
    import subprocess

    from scylla_singa.swarm.overlays import ISOLATION_RULE, JOB_POOL

    job = _job()
    net = create_job_network(docker_client, job)
    try:
        import ipaddress

        subnet = ipaddress.ip_network(net.attrs["IPAM"]["Config"][0]["Subnet"])
        assert subnet.subnet_of(JOB_POOL) and subnet.prefixlen == 24
        assert subprocess.run(["iptables", "-C", *ISOLATION_RULE]).returncode == 0
    finally:
        remove_job_network(docker_client, job)


def test_job_networks_created_at_once_each_get_a_subnet_of_their_own(docker_client, swarm_manager) -> None:
    """The framework prepares jobs on a pool of threads: overlays created at the same moment must not pick
    the same free /24 (the swarm would never allocate the second; the job failed after 15 s)."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = [f"at-once-{i}-{uuid.uuid4().hex[:6]}" for i in range(4)]
    try:
        with ThreadPoolExecutor(len(jobs)) as pool:
            nets = list(pool.map(lambda j: create_job_network(docker_client, j), jobs))
        subnets = [n.attrs["IPAM"]["Config"][0]["Subnet"] for n in nets]
        assert len(set(subnets)) == len(jobs), subnets
    finally:
        for j in jobs:
            remove_job_network(docker_client, j)
