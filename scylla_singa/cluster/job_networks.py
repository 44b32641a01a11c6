"""The job overlays a cluster's jobs made, found before `cluster down` and removed after it.

A job's overlay (`scylla-<job>`) lives on the host's swarm manager, not in
the cluster, and it is the framework that removes it when the job ends. A
framework stopped mid-job never does, so `cluster down` would leave it
behind. Which overlays are the cluster's is read from the node engines while
they still answer: the job label of their containers (running, or stopped)
and the scylla-singa overlays they have joined. Once the engines are gone
and their swarm nodes removed, nothing is attached any more and the host
can remove those networks.
"""

from __future__ import annotations

import docker
import docker.errors

from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL, job_network_name
from scylla_singa.swarm.overlays import SwarmError, remove_job_network
from . import engines
from .config import ClusterConfig, NodeSpec


def jobs_on_engine(engine: docker.DockerClient) -> set[str]:
    """Job ids of the containers on `engine` and of the scylla-singa overlays it has joined."""
    jobs = {c.labels.get(JOB_LABEL, "") for c in engine.containers.list(
        all=True, ignore_removed=True, filters={"label": JOB_LABEL})}
    jobs |= {(n.attrs.get("Labels") or {}).get(JOB_LABEL, "") for n in engine.networks.list(
        filters={"label": f"{MANAGED_LABEL}=true"})}
    return jobs - {""}


def jobs_on_nodes(config: ClusterConfig, node_indexes: list[int]) -> set[str]:
    """Job ids seen on the cluster's node engines that answer (call it before they are stopped)."""
    jobs: set[str] = set()
    for i in node_indexes:
        node = NodeSpec.build(config, i)
        if not engines.answers(node.socket):
            continue
        try:
            jobs |= jobs_on_engine(engines.client(node.socket, timeout=30))
        except docker.errors.DockerException:
            continue  # an engine dying as we ask: its jobs' overlays are left to `swarm gc`
    return jobs


def remove_job_networks(host: docker.DockerClient, jobs: set[str], timeout_s: float = 30.0) -> tuple[list[str], list[str]]:
    """Remove the overlays of `jobs` from the host swarm; (removed network names, problems)."""
    removed: list[str] = []
    problems: list[str] = []
    for job in sorted(jobs):
        try:
            if remove_job_network(host, job, timeout_s=timeout_s):
                removed.append(f"network {job_network_name(job)}")
        except SwarmError as exc:
            problems.append(str(exc))
    return removed, problems
