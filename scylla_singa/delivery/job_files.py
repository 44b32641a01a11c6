"""What delivery promises: the Delivery interface, the Artifacts it returns, the cluster file.

Two deliveries implement it (volume.py, hdfs.py); the framework calls
`prepare` before a job's first launch and `cleanup` after its end, and
builds every task from the Artifacts (volumes or fetcher URIs, workspace,
environment).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from scylla_singa.contracts import proc_hostname
from scylla_singa.jobconf.plan import JobPlan


@dataclass(frozen=True)
class Artifacts:
    """What delivery and networking prepared for a job's tasks (pure data, persisted)."""

    network: str
    volumes: tuple[dict[str, Any], ...] = ()
    uris: tuple[dict[str, Any], ...] = ()
    workspace: str = "/workspace"
    env: tuple[tuple[str, str], ...] = ()


class DeliveryError(RuntimeError):
    """job.conf cannot be delivered; the message says what to change."""


class Delivery(Protocol):
    def prepare(self, job_id: str, files: dict[str, bytes], network: str) -> Artifacts:
        """Make `files` available to every task of `job_id`; idempotent."""

    def cleanup(self, job_id: str, keep_workspace: bool) -> None:
        """Remove what prepare made (the workspace too unless keep_workspace); idempotent."""


def cluster_file(job_id: str, plan: JobPlan) -> bytes:
    """cluster.json (docs/contracts.md): every process's name on the overlay and its port."""
    port = plan.shape.start_port
    return json.dumps({"job": job_id, "nprocs": plan.nprocs,
                       "procs": [{"id": p.id, "host": proc_hostname(job_id, p.id), "port": port}
                                 for p in plan.procs]}, indent=1).encode()
