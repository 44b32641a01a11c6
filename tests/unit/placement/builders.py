"""Small builders for placement tests: agents and job plans without files."""

from __future__ import annotations

from scylla_singa.jobconf.modelsize import ModelSize
from scylla_singa.jobconf.plan import Demand, JobPlan, PlanOptions, ProcessPlan
from scylla_singa.jobconf.processes import ClusterShape, process_table
from scylla_singa.jobconf.traffic import traffic_edges
from scylla_singa.placement.resource_vector import ResourceVector
from scylla_singa.placement.snapshot import AgentView


def agent(i: int | str, cpus: float = 4, mem: float = 4096, gpus: float = 0, net_bw: float | None = None,
          **attributes) -> AgentView:
    name = f"node{i}" if isinstance(i, int) else i
    return AgentView(f"agent-{name}", name, ResourceVector(cpus, mem, gpus), attributes, net_bw)


def job(shape: ClusterShape | None = None, cpus: float = 1, mem: int = 256, gpus: int = 0,
        param_bytes: int = 40_000, steps_per_s: float = 10.0, name: str = "j", **shape_kw) -> JobPlan:
    shape = shape or ClusterShape(**shape_kw)
    table = process_table(shape)
    edges = traffic_edges(shape, param_bytes)
    procs = tuple(ProcessPlan(spec, Demand(cpus, mem, 0.0, gpus)) for spec in table)
    return JobPlan(name, shape, ModelSize(param_bytes // 4, 32, 100), procs, edges, PlanOptions(steps_per_s=steps_per_s))
