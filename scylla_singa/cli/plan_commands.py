"""`scylla-singa plan`: show the process table, demand and traffic of a job.conf."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from scylla_singa.cluster.local import local_cluster
from scylla_singa.framework.mesos_http import MesosHttp, MesosHttpError
from scylla_singa.jobconf.errors import JobConfError
from scylla_singa.jobconf.gpus import check_gpus
from scylla_singa.jobconf.parse import load_job
from scylla_singa.jobconf.plan import JobPlan, PlanOptions, load_plan
from .limit_options import job_limit_options, limits_from_flags
from .mesos_credential import mesos_credential

# The human form lists at most this many edges, heaviest first (--json has them all): a job of
# hundreds of processes has tens of thousands, which no terminal reader wants and a table
# takes minutes to lay out.
MAX_EDGE_ROWS = 50


@click.command()
@click.argument("job_conf", metavar="JOB.conf", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object instead of tables.")
@click.option("--cpus", type=click.FloatRange(min=0.01), help="CPUs per process (default: its worker + server threads).")
@click.option("--mem", "mem_mb", type=click.IntRange(min=32), help="Memory per process in MB (default: estimated).")
@click.option("--steps-per-s", type=click.FloatRange(min=0.001), default=10.0, show_default=True,
              help="Nominal training rate used to turn bytes per step into Mbit/s.")
@click.option("--master", help="The Mesos master whose agents a GPU job is checked against (HOST:PORT). Default: "
                               "the local cluster's if one is up, else this machine (an embedded agent, no GPUs).")
@job_limit_options
def plan(job_conf: str, as_json: bool, cpus: float | None, mem_mb: int | None, steps_per_s: float,
         master: str | None, **limit_flags: int) -> None:
    """Read JOB.conf and print SINGA's process table: which workers and
    servers each process hosts, what each needs (CPUs, memory, network) and
    the estimated traffic between processes.

    Exits 2 with FILE:LINE:COL: message when the file cannot be used (also
    when it is larger than 128 KiB, not UTF-8, or makes a job bigger than the
    --max-* ceilings), or when it is a GPU job (`gpu:`) and the cluster it
    would run on has no agent with that many GPUs.
    """
    options = PlanOptions(cpus=cpus, mem_mb=mem_mb, steps_per_s=steps_per_s, limits=limits_from_flags(limit_flags))
    try:
        job_plan = load_plan(job_conf, options)
        if any(p.demand.gpus for p in job_plan.procs):
            cluster, gpus = _cluster_gpus(master)
            check_gpus(job_plan, load_job(job_conf).text, job_conf, gpus, cluster)
    except JobConfError as exc:
        click.echo(str(exc), err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(job_plan.to_dict()))
    else:
        print_plan(job_plan, Console())


def _cluster_gpus(master: str | None) -> tuple[str, list[float]]:
    """(what to call the cluster, every agent's GPUs) of the cluster `run` would use: --master, else the local
    cluster, else this machine, whose embedded agent offers no GPUs."""
    if master is None:
        info = local_cluster()
        master = info.master if info is not None and info.masters else None
        if master is None:
            return "this machine (the embedded agent `run` would start)", [0.0]
    try:
        return f"the cluster at {master}", [a.free.gpus for a in MesosHttp(master, mesos_credential()).cluster_agents()]
    except MesosHttpError as exc:
        raise click.ClickException(f"cannot read the agents of {master} to check this GPU job: {exc}") from None


def print_plan(job_plan: JobPlan, console: Console) -> None:
    """The human-readable form of a plan."""
    s = job_plan.shape
    console.print(f"[bold]{job_plan.job}[/bold]: {job_plan.nprocs} process(es), "
                  f"{s.nworker_groups}x{s.nworkers_per_group} workers, {s.nserver_groups}x{s.nservers_per_group} servers"
                  f"{', servers separate' if s.server_worker_separate else ''}; "
                  f"{job_plan.model.param_count:,} parameters")
    table = Table("proc", "workers (group,id)", "servers (group,id)", "cpus", "mem MB", "net Mbit/s")
    for p in job_plan.procs:
        table.add_row(str(p.id), _ids(p.spec.workers), _ids(p.spec.servers),
                      f"{p.demand.cpus:g}", str(p.demand.mem_mb), f"{p.demand.net_mbps:g}")
    console.print(table)
    if job_plan.edges:
        shown = sorted(job_plan.edges, key=lambda e: -e.bytes_per_step)[:MAX_EDGE_ROWS]
        edges = Table("from", "to", "bytes/step")
        for e in sorted(shown, key=lambda e: (e.src, e.dst)):
            edges.add_row(str(e.src), str(e.dst), f"{e.bytes_per_step:,}")
        console.print(edges)
        if len(job_plan.edges) > len(shown):
            console.print(f"the {len(shown)} heaviest of {len(job_plan.edges):,} edges; --json lists them all")


def _ids(pairs: tuple[tuple[int, int], ...]) -> str:
    return " ".join(f"({g},{j})" for g, j in pairs) or "-"
