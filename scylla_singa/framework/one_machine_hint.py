"""How to run a job anyway on one machine's embedded agent when its gang can never fit.

On the embedded default the cluster is this machine: a 4-process job of 1
cpu each on a 2-core laptop can never fit, and "0/1 agents can host process
2: insufficient cpus" is true but leaves the user stuck. What they expect on
one machine is to run it slower, the processes sharing the cpus. Two flags
do that: `--cpus` gives each process less, `--agent-resources` lets the
embedded agent offer more cpus than the machine has. Each is suggested only
when the job's own policy places the gang with it (a policy may, say, want
a whole SINGA process's cpus on one agent). Memory is not shared that way
(a process short of memory is killed) and no flag makes a GPU: then no hint.
"""

from __future__ import annotations

import dataclasses
import math

from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import JobPlan, plan_job
from scylla_singa.placement.place import Placed, place
from scylla_singa.placement.policy import Policy
from scylla_singa.placement.resource_vector import ResourceVector
from scylla_singa.placement.snapshot import AgentView
from .model import JobSpec


def one_machine_hint(spec: JobSpec, plan: JobPlan, agents: tuple[AgentView, ...], policy: Policy) -> str:
    """The sentence telling how to run the job on the single embedded agent anyway, or "" when no flag helps."""
    if len(agents) != 1 or not plan.procs:
        return ""
    agent, n = agents[0], len(plan.procs)
    need = sum((ResourceVector(p.demand.cpus, p.demand.mem_mb, p.demand.gpus) for p in plan.procs), ResourceVector())
    if need.cpus <= agent.free.cpus or need.mem_mb > agent.free.mem_mb or need.gpus > agent.free.gpus:
        return ""
    ways = []
    each = math.floor(agent.free.cpus / n * 100) / 100
    if each >= 0.01 and _fits(_plan_with_cpus(spec, each), agent, policy):
        ways.append(f"give each process less: --cpus {each:g}")
    offer = math.ceil(need.cpus)
    bigger = dataclasses.replace(agent, free=ResourceVector(offer, agent.free.mem_mb, agent.free.gpus))
    if _fits(plan, bigger, policy):
        ways.append(f'let the embedded agent offer more cpus than the machine has: --agent-resources "cpus:{offer}"')
    if not ways:
        return ""
    return (f"this machine's embedded agent has {agent.free.cpus:g} cpus and the job's {n} processes ask for "
            f"{need.cpus:g} (memory fits); to run it here anyway, the processes sharing the cpus and training "
            f"slower, {' or '.join(ways)}")


def _plan_with_cpus(spec: JobSpec, cpus: float) -> JobPlan:
    options = dataclasses.replace(spec.plan_options, cpus=cpus)
    return plan_job(parse_job_text(spec.conf_text, spec.conf_path), options)


def _fits(plan: JobPlan, agent: AgentView, policy: Policy) -> bool:
    return isinstance(place(plan, (agent,), policy), Placed)
