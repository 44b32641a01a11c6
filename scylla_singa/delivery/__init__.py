"""Getting job.conf and the cluster file into every task's sandbox.

Two ways, one interface: `volume` writes them to a per-job directory under
an allowed root and bind-mounts them read-only (the embedded default, and
any cluster whose hosts share that directory); `hdfs` uploads them through
WebHDFS and lets the Mesos fetcher pull them (SINGA-11's way, for real
clusters). Both also provide the job's workspace for checkpoints.
"""

from __future__ import annotations

import json
from typing import Protocol

from ..jobconf.plan import JobPlan
from ..framework.model import Artifacts, proc_hostname


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
