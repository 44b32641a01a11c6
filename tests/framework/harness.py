"""The framework's shell on pymesos's real driver against an embedded master with simulated agents.

`make_spec` builds a JobSpec from an example job.conf; `Harness` wires a
FrameworkShell (no Docker: no swarm manager, volume delivery in a temp dir)
to an EmbeddedMesos and runs jobs to their end.
"""

from __future__ import annotations

import time
from pathlib import Path

from scylla_singa.delivery.volume import VolumeDelivery
from scylla_singa.framework.core import CoreConfig, FrameworkCore
from scylla_singa.framework.model import JobSpec
from scylla_singa.framework.progress_book import ProgressBook
from scylla_singa.framework.shell import FrameworkShell
from scylla_singa.framework.store import JobStore
from scylla_singa.mesos.embedded import EmbeddedMesos

REPO = Path(__file__).resolve().parents[2]




def make_spec(job_id: str, conf: str = "examples/digits-mlp/job.conf", command: str = "sleep 1",
              max_restarts: int = 0, cpus: float | None = None, submitted_at: float | None = None) -> JobSpec:
    path = REPO / conf
    return JobSpec(job_id, str(path), path.read_text(), "singa:latest", "spread", "volume", command=command,
                   max_restarts=max_restarts, cpus=cpus, submitted_at=submitted_at or time.time())


class Harness:
    def __init__(self, mesos: EmbeddedMesos, tmp: Path, gang_timeout_s: float = 30.0) -> None:
        self.mesos = mesos
        self.store = JobStore(tmp / "framework.sqlite")
        delivery = VolumeDelivery(tmp / "jobs", (tmp,))
        core = FrameworkCore(CoreConfig(gang_timeout_s=gang_timeout_s, backoff_base_s=0.2, kill_grace_s=1))
        self.shell = FrameworkShell(core, self.store, delivery, None, ProgressBook(), tick_s=0.1)

    def start(self) -> "Harness":
        self.shell.start(self.mesos.master_address, credential=self.mesos.framework_credential)
        assert self.shell.subscribed.wait(15), "framework did not subscribe"
        return self

    def run(self, spec: JobSpec, timeout: float = 30.0):
        self.shell.submit(spec)
        assert self.shell.ended[spec.job_id].wait(timeout), f"{spec.job_id} did not end"
        return self.shell.job(spec.job_id)
