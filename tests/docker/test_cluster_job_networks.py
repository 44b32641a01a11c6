"""`cluster down`'s cleanup of job overlays, on the real engine and swarm.

The host engine stands in for a node engine (it is the one engine a test may
create containers on without a cluster): a job's container attached to its
real overlay, as a task left running by a framework stopped mid-job.
"""

from __future__ import annotations

import uuid

import pytest

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.job_networks import jobs_on_engine, jobs_on_nodes, remove_job_networks
from scylla_singa.contracts import JOB_LABEL, job_network_name
from scylla_singa.swarm.overlays import create_job_network, remove_containers, remove_job_network

TINY = "scylla-tiny:latest"


@pytest.fixture
def job_with_a_container(docker_client, swarm_manager):
    job = f"calm-{uuid.uuid4().hex[:8]}"
    net = create_job_network(docker_client, job)
    box = docker_client.containers.run(TINY, ["sleep", "300"], detach=True, network=net.name,
                                       labels={JOB_LABEL: job}, name=f"{job}-proc-0")
    yield job, box
    remove_containers([box])
    remove_job_network(docker_client, job)


def _exists(client, name: str) -> bool:
    return any(n.name == name for n in client.networks.list(names=[name]))


def test_the_jobs_of_an_engine_are_found_and_their_overlays_removed_once_nothing_is_attached(
        docker_client, job_with_a_container) -> None:
    job, box = job_with_a_container
    assert job in jobs_on_engine(docker_client)
    # still attached: reported as a problem, not raised, and the network stays
    removed, problems = remove_job_networks(docker_client, {job}, timeout_s=2)
    assert removed == [] and len(problems) == 1 and job_network_name(job) in problems[0]
    assert _exists(docker_client, job_network_name(job))
    box.remove(force=True)  # what stopping the node engine does to the job's containers
    removed, problems = remove_job_networks(docker_client, {job})
    assert (removed, problems) == ([f"network {job_network_name(job)}"], [])
    assert not _exists(docker_client, job_network_name(job))


def test_node_engines_that_do_not_answer_are_skipped(tmp_path) -> None:
    config = ClusterConfig(prefix=f"calm{uuid.uuid4().hex[:4]}", home=str(tmp_path))
    assert jobs_on_nodes(config, [1, 2]) == set()
