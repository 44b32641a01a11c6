"""The job plan: SINGA's processes with what each needs and who talks to whom.

This is the one model of a job that the CLI (`scylla-singa plan`), the
placement policies and the framework share. Building it is pure: a parsed and
validated job.conf plus PlanOptions in, a frozen JobPlan out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .job_limits import JobLimits, check_limits
from .modelsize import ModelSize, estimate_model_size
from .parse import ParsedJob, load_job
from .processes import ClusterShape, ProcessSpec, process_table
from .traffic import Edge, process_traffic, traffic_edges
from .validate import validate_job

if TYPE_CHECKING:
    import networkx

# What a runtime process needs before it holds any model: interpreter, numpy, zmq.
BASE_MEM_MB = 128
# Copies of the parameters a worker keeps (values, gradients, a pulled copy)
# and a server keeps (values, updater history, incoming gradients).
WORKER_PARAM_COPIES = 3
SERVER_PARAM_COPIES = 3
MEM_GRANULE_MB = 32


@dataclass(frozen=True)
class PlanOptions:
    """Knobs for turning a job into resource requests.

    cpus / mem_mb override the per-process estimates. steps_per_s is the
    nominal training rate used to turn bytes per step into Mbit/s. limits
    are the ceilings on the job's size (job_limits.py), checked before anything
    is built from its counts.
    """

    cpus: float | None = None
    mem_mb: int | None = None
    steps_per_s: float = 10.0
    limits: JobLimits = JobLimits()


@dataclass(frozen=True)
class Demand:
    """Resources one process asks for."""

    cpus: float
    mem_mb: int
    net_mbps: float
    gpus: int = 0


@dataclass(frozen=True)
class ProcessPlan:
    """A process of the job with its demand."""

    spec: ProcessSpec
    demand: Demand

    @property
    def id(self) -> int:
        return self.spec.id


@dataclass(frozen=True)
class JobPlan:
    """Everything the scheduler needs to know about a job, computed once."""

    job: str
    shape: ClusterShape
    model: ModelSize
    procs: tuple[ProcessPlan, ...]
    edges: tuple[Edge, ...]
    options: PlanOptions = field(default_factory=PlanOptions)
    train_steps: int = 0

    @property
    def nprocs(self) -> int:
        return len(self.procs)

    def graph(self) -> "networkx.Graph":
        """The communication graph: processes as nodes (with demand), edges weighted by bytes per step."""
        import networkx as nx

        g = nx.Graph(job=self.job)
        for p in self.procs:
            g.add_node(p.id, cpus=p.demand.cpus, mem_mb=p.demand.mem_mb, net_mbps=p.demand.net_mbps)
        for e in self.edges:
            g.add_edge(e.src, e.dst, weight=e.bytes_per_step)
        return g

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `scylla-singa plan --json`."""
        return {
            "job": self.job,
            "nprocs": self.nprocs,
            "procs": [
                {"id": p.id, "workers": [list(w) for w in p.spec.workers],
                 "servers": [list(s) for s in p.spec.servers],
                 "cpus": p.demand.cpus, "mem_mb": p.demand.mem_mb, "net_mbps": p.demand.net_mbps,
                 **({"gpus": p.demand.gpus} if p.demand.gpus else {})}
                for p in self.procs
            ],
            "edges": [{"src": e.src, "dst": e.dst, "bytes_per_step": e.bytes_per_step} for e in self.edges],
        }


def plan_job(parsed: ParsedJob, options: PlanOptions = PlanOptions()) -> JobPlan:
    """Validate `parsed`, check it against options.limits and compute its plan. Raises JobConfError."""
    validate_job(parsed)
    job = parsed.proto
    shape = ClusterShape.from_proto(job.cluster)
    check_limits(parsed, shape, options.limits)  # before any table is built from the counts
    table = process_table(shape)
    model = estimate_model_size(job.neuralnet)
    edges = traffic_edges(shape, model.param_bytes)
    traffic = process_traffic(table, edges)
    procs = tuple(ProcessPlan(spec, _demand(spec, shape, model, traffic[spec.id], len(job.gpu), options))
                  for spec in table)
    return JobPlan(job.name, shape, model, procs, edges, options, job.train_steps)


def load_plan(path: str | Path, options: PlanOptions = PlanOptions()) -> JobPlan:
    """Read, validate and plan a job.conf file. Raises JobConfError."""
    return plan_job(load_job(path), options)


def _demand(spec: ProcessSpec, shape: ClusterShape, model: ModelSize, bytes_per_step: int,
            gpus: int, options: PlanOptions) -> Demand:
    cpus = options.cpus if options.cpus is not None else float(len(spec.workers) + len(spec.servers))
    mem = options.mem_mb if options.mem_mb is not None else _memory_mb(spec, shape, model)
    net = round(bytes_per_step * 8 * options.steps_per_s / 1e6, 3)
    return Demand(cpus=cpus, mem_mb=mem, net_mbps=net, gpus=gpus)


def _memory_mb(spec: ProcessSpec, shape: ClusterShape, model: ModelSize) -> int:
    """Interpreter baseline + model replicas of the workers + parameter slices of the servers."""
    worker_batch = max(1, model.batch_size // shape.nworkers_per_group)
    worker_bytes = (WORKER_PARAM_COPIES * model.param_bytes
                    + 2 * 4 * model.activations_per_sample * worker_batch)
    server_bytes = SERVER_PARAM_COPIES * model.param_bytes / shape.nservers_per_group
    total = BASE_MEM_MB * 2**20 + len(spec.workers) * worker_bytes + len(spec.servers) * server_bytes
    return MEM_GRANULE_MB * math.ceil(total / 2**20 / MEM_GRANULE_MB)
