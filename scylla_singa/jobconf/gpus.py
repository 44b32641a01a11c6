"""A job that asks for GPUs, against a cluster that has none (pure).

SINGA 0.3.0 runs its cuDNN layers on the devices a conf lists in `gpu:`;
every GPU conf of its examples lists them, and the plan gives each process
that many GPUs. The images built here are CPU builds, and a cluster of
agents offering no GPUs can never run such a job: `scylla-singa plan` says
so at once, at the `gpu` line, rather than a job waiting for offers that
never come.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import JobConfError
from .locate import find_field
from .plan import JobPlan


def check_gpus(plan: JobPlan, text: str, path: str, agent_gpus: Sequence[float], cluster: str) -> None:
    """Raise JobConfError when a process of `plan` needs more GPUs than any agent of `cluster` has."""
    wanted = max((p.demand.gpus for p in plan.procs), default=0)
    if not wanted or any(g >= wanted for g in agent_gpus):
        return
    line, col = find_field(text, "gpu") or (None, None)
    most = max(agent_gpus, default=0.0)
    has = f"{cluster} has no agent with GPUs" if most <= 0 else \
        f"no agent of {cluster} has that many (at most {most:g})"
    raise JobConfError(
        f"this is a GPU job: each process needs {wanted} GPU{'s' if wanted > 1 else ''} (`gpu:`), but "
        f"{has}; singa:latest is a CPU build of Apache SINGA 0.3.0 (no cuDNN layers): use a CPU conf of the "
        "example (its layers without kCudnn..., no `gpu:`), or a cluster whose agents offer gpus",
        path, line, col)
