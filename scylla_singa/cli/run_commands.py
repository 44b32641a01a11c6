"""The job commands: run, resume, jobs, status, logs, kill.

`run` and `resume` hand the framework its SessionWiring: the running local
cluster (scylla_singa.cluster), an embedded master with the web UI
(scylla_singa.mesos.embedded + scylla_singa.ui.master_page) and the job
view's routes (scylla_singa.ui.job_view). The framework imports none of them.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

import click
import requests
from rich.console import Console
from rich.table import Table

from scylla_singa.cluster.local import local_cluster
from scylla_singa.common.home import allowed_roots, home_refusal, scylla_home
from scylla_singa.contracts import DEFAULT_COMMAND
from scylla_singa.framework.log_routing import framework_log_file, route_logs
from scylla_singa.framework.mesos_http import MesosHttp, MesosHttpError
from scylla_singa.framework.runtime_kind import AUTO, RUNTIME_CHOICES
from scylla_singa.framework.session import RunOptions, SessionWiring, UsageError, job_summary, resume_jobs, run_jobs
from scylla_singa.framework.control_token import ControlTokenError, read_control_token
from scylla_singa.framework.store import JobStore, JobStoreError
from scylla_singa.mesos.api.credentials import credential_json, write_private
from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from scylla_singa.placement.policy import builtin_policy_names
from scylla_singa.ui import job_view, master_page
from .limit_options import job_limit_options, limits_from_flags
from .mesos_credential import mesos_credential
from .param_types import Duration


def run_options(f):
    options = [
        click.option("--image", default="singa:latest", show_default=True, envvar="SCYLLA_IMAGE",
                     help="Docker image of every process: singa:latest is Apache SINGA 0.3.0, singa-py:latest the "
                          "project's Python runtime (tiny models, fast tests) [env: SCYLLA_IMAGE]."),
        click.option("--runtime", type=click.Choice(RUNTIME_CHOICES), default=AUTO, show_default=True,
                     help="Which task contract the image keeps: apache-singa (Apache SINGA through singa-task: a "
                          "ZooKeeper for jobs of several processes, local workspaces) or singa-py. auto reads the "
                          "image's io.scylla.runtime label on this machine's engine (an image without one: singa-py)."),
        click.option("--zk", metavar="HOST:PORT[,...]",
                     help="ZooKeeper for real SINGA jobs of several processes (each job gets the chroot "
                          "/scylla/jobs/<job>); reachable from the containers and from here. Default: the local "
                          "cluster's when the jobs run on it, else a ZooKeeper container of each job's own on its "
                          "overlay."),
        click.option("--master", help="Mesos master: HOST:PORT or zk://HOST:PORT/mesos. Default: the local "
                                      "cluster (`scylla-singa cluster up`) if running, else an embedded master "
                                      "and agent on this machine's Docker engine."),
        click.option("--credential", "credential_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="A file with the principal and secret this framework authenticates to the master with "
                          "(the master's framework.credential). Default: $SCYLLA_CREDENTIAL, else "
                          "$SCYLLA_PRINCIPAL with $SCYLLA_SECRET, else the local cluster's, else "
                          "$SCYLLA_HOME/master/framework.credential; an embedded master needs none."),
        click.option("--policy", default="spread", show_default=True,
                     help=f"Placement policy: {', '.join(builtin_policy_names())}, or a YAML file."),
        click.option("--deliver", type=click.Choice(["volume", "hdfs"]), default=None,
                     help="How job.conf reaches the sandboxes: a read-only bind mount, or HDFS + the Mesos fetcher "
                          "[default: hdfs on a cluster of separate machines (`cluster init`/`join`), else volume]."),
        click.option("--hdfs", metavar="URL", help="WebHDFS address for --deliver hdfs, e.g. http://namenode:9870."),
        click.option("--volume-root", type=click.Path(file_okay=False, path_type=Path),
                     help="Where per-job directories go for --deliver volume (must be under an allowed root; "
                          "default $SCYLLA_HOME/jobs)."),
        click.option("--workspace", "workspace_dir", type=click.Path(file_okay=False, path_type=Path),
                     help="A host directory (under an allowed root) shared by the jobs given it, mounted at "
                          "/workspace: each job works in its conf's cluster.workspace when that lies in /workspace "
                          "(so a checkpoint_path can name an earlier job's checkpoints). Default: a fresh one per job."),
        click.option("--env", "env", multiple=True, metavar="NAME=VALUE",
                     help="More environment for every process (repeatable), e.g. SCYLLA_SINGA_LOCAL_BIN=singa-rnnlm "
                          "for SINGA's rnnlm example, whose layers are in a program of their own."),
        click.option("--max-restarts", type=click.IntRange(min=0), default=2, show_default=True,
                     help="Gang restarts after a process fails or is lost (resuming from the newest checkpoint)."),
        click.option("--gang-timeout", type=Duration(), default="30s", show_default=True,
                     help="Release held offers after this long without fitting the whole job."),
        click.option("--connect-timeout", type=Duration(), default="30s", show_default=True,
                     help="Give up when the master cannot be subscribed to within this time."),
        click.option("--cpus", type=click.FloatRange(min=0.01), help="CPUs per process (default: its threads)."),
        click.option("--mem", "mem_mb", type=click.IntRange(min=32), help="Memory per process in MB (default: estimated)."),
        click.option("--command", default=DEFAULT_COMMAND, show_default=True,
                     help="Command template run in each container ({proc}, {job}, {workspace}, {resume}: "
                          "' -resume' on restarts, appended if absent); lets real SINGA images be used."),
        click.option("--agent-resources", metavar="SPEC",
                     help='Resources of the embedded agent, e.g. "cpus:8;mem:8192" (default: the machine\'s).'),
        click.option("--advertise-ip", help="Address containers use to reach this framework (default: the swarm's)."),
        click.option("--api-port", type=click.IntRange(0, 65535), default=0, show_default=True,
                     help="Port of the job view and progress intake (0: any free one; `resume` takes the "
                          "earlier session's port back so running containers keep reporting)."),
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object per job as the last stdout lines."),
        click.option("--linger", type=Duration(), default="0s", show_default=True,
                     help="Keep the job view and an embedded master's web UI up this long after the jobs end."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Log the framework's decisions and pymesos's connection chatter in the terminal too "
                          "(everything, tracebacks included, always goes to $SCYLLA_HOME/framework.log)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _opts(kw: dict) -> RunOptions:
    route_logs(framework_log_file(), verbose=kw.pop("verbose"))
    return RunOptions(image=kw["image"], master=kw["master"], policy=kw["policy"], deliver=kw["deliver"],
                      hdfs=kw["hdfs"], volume_root=kw["volume_root"], max_restarts=kw["max_restarts"],
                      gang_timeout_s=kw["gang_timeout"], connect_timeout_s=kw["connect_timeout"], cpus=kw["cpus"],
                      mem_mb=kw["mem_mb"], command=kw["command"], as_json=kw["as_json"],
                      agent_resources=kw["agent_resources"], advertise_ip=kw["advertise_ip"], linger_s=kw["linger"],
                      api_port=kw["api_port"], runtime=kw["runtime"], zk=kw["zk"], workspace_dir=kw["workspace_dir"],
                      env=tuple(kw["env"]), credential_file=kw["credential_file"])


def _start_embedded(opts: RunOptions) -> EmbeddedMesos:
    """A master (with its web UI) and one agent on this machine's Docker engine, started."""
    agent = AgentSpec(resources=opts.agent_resources, hostname=socket.gethostname())
    embedded = EmbeddedMesos([agent], allowed_host_paths=list(allowed_roots()), hdfs=opts.hdfs,
                             master_routes=[master_page.routes])
    embedded.start()
    # Its web UI asks for credentials like any master's: the secret (made for this run only) goes to a 0600
    # file for the user's browser, never to the terminal.
    cred = embedded.framework_credential
    path = scylla_home() / EMBEDDED_CREDENTIAL_FILE
    path.unlink(missing_ok=True)
    write_private(path, credential_json(cred))
    click.echo(f"the embedded master's web UI asks for user {cred.principal} and the secret in {path}", err=True)
    return embedded


EMBEDDED_CREDENTIAL_FILE = "embedded-master.credential"


WIRING = SessionWiring(local_cluster=local_cluster, start_embedded=_start_embedded, ui_routes=job_view.routes)


def _exit_on_usage_error(fn, *args) -> None:
    try:
        code = fn(*args, WIRING)
    except UsageError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    sys.exit(code)


@click.command()
@click.argument("job_confs", nargs=-1, required=True, metavar="JOB.conf...")
@run_options
@job_limit_options
def run(job_confs: tuple[str, ...], **kw) -> None:
    """Run SINGA jobs on Mesos and follow them to the end.

    Each process of each job becomes a Docker container on the job's own
    Swarm overlay, placed by the policy once the whole job fits (gang
    scheduling). A live progress bar shows step, loss and accuracy. Exits 0
    when every job finished; otherwise 1, naming the failing process, its
    reason and its last log lines; 2 when the input is refused (a job.conf
    or policy file that cannot be used, as FILE:LINE:COL: message, also one
    past the --max-* ceilings on a job's size), before any master is contacted.
    """
    limits = limits_from_flags(kw)
    opts = _opts(kw)
    opts.limits = limits
    _exit_on_usage_error(run_jobs, list(job_confs), opts)


@click.command()
@click.argument("job", required=False)
@run_options
def resume(job: str | None, **kw) -> None:
    """Carry on the jobs of a scylla-singa that stopped or crashed.

    Re-subscribes with the same framework id, reconciles the tasks with the
    master and goes on without relaunching what still runs. Needs the master
    those jobs ran on to be up (a cluster or an external master).
    """
    _exit_on_usage_error(resume_jobs, job, _opts(kw))


def _store() -> JobStore:
    """The framework store, or a clear error when it cannot be read (it is its owner's only)."""
    try:
        return JobStore(scylla_home() / "framework.sqlite")
    except JobStoreError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(home_refusal(exc)) from None


def _one_job(store: JobStore, prefix: str) -> str:
    found = store.find(prefix)
    if not found:
        raise click.ClickException(f"no job {prefix!r}; `scylla-singa jobs` lists them")
    if len(found) > 1:
        raise click.ClickException(f"{prefix!r} matches {', '.join(found)}; give more of the id")
    return found[0]


@click.command()
@click.option("--json", "as_json", is_flag=True)
def jobs(as_json: bool) -> None:
    """List every job this machine ran, newest last."""
    store = _store()
    rows = []
    for job_id, state, _fid, submitted in store.jobs():
        job = store.load(job_id)
        rows.append({"job": job_id, "state": state, "submitted": submitted,
                     "restarts": job.restarts if job else 0, "procs": len(job.plan.procs) if job else 0})
    if as_json:
        click.echo(json.dumps(rows))
        return
    table = Table("job", "state", "procs", "restarts", "submitted")
    for r in rows:
        table.add_row(r["job"], r["state"], str(r["procs"]), str(r["restarts"]),
                      time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["submitted"])))
    Console().print(table)


@click.command()
@click.argument("job")
@click.option("--json", "as_json", is_flag=True)
def status(job: str, as_json: bool) -> None:
    """Show a job: state, where each process runs, why it waits or failed."""
    store = _store()
    record = store.load(_one_job(store, job))
    summary = job_summary(record)
    progress = store.progress(record.job_id, limit=1)
    summary["last_progress"] = progress[-1] if progress else None
    fid = next((f for j, _, f, _ in store.jobs() if j == record.job_id), None)
    lost = store.master_lost_since(fid)
    summary["task_states_confirmed"], summary["master_lost_at"] = lost is None, lost
    if as_json:
        click.echo(json.dumps(summary))
        return
    console = Console()
    console.print(f"[bold]{record.job_id}[/bold] ({record.plan.job}): {record.state.value}, "
                  f"policy {record.spec.policy}, restarts {record.restarts}/{record.spec.max_restarts}")
    if lost is not None:
        when = time.strftime("%H:%M:%S", time.localtime(lost))
        console.print(f"task states unconfirmed: the framework lost the Mesos master at {when} "
                      f"({time.time() - lost:.0f} s ago) and has not re-subscribed; the states below are the "
                      "last the master reported (the job's own progress reports may be newer)", markup=False)
    if record.waiting_reason and record.state.value == "WAITING":
        console.print(f"waiting: {record.waiting_reason}")
    if record.failure:
        console.print(f"reason: {record.failure}")
    table = Table("proc", "agent", "task", "state", "message")
    for p in sorted(record.tasks.values(), key=lambda t: t.proc):
        table.add_row(str(p.proc), p.hostname, p.task_id, p.state, p.message[:60])
    console.print(table)
    if summary["last_progress"]:
        lp = summary["last_progress"]
        console.print(f"last progress: step {lp['step']} loss {lp['loss']} accuracy {lp['accuracy']}")


@click.command()
@click.argument("job")
def kill(job: str) -> None:
    """Stop a running job (through the scylla-singa process that runs it)."""
    store = _store()
    job_id = _one_job(store, job)
    fid = next((f for j, _, f, _ in store.jobs() if j == job_id), None)
    api = store.get_meta(f"api:{fid}")
    if not api:
        raise click.ClickException(f"no scylla-singa process is known to run {job_id}")
    try:
        token = read_control_token(scylla_home())
    except ControlTokenError as exc:
        raise click.ClickException(f"cannot kill {job_id}: {exc}") from None
    try:
        resp = requests.post(f"{api}/api/jobs/{job_id}/kill", timeout=10, headers={"Authorization": f"Bearer {token}"})
    except requests.RequestException:
        raise click.ClickException(f"the scylla-singa process running {job_id} does not answer at {api}; "
                                   "if it crashed, `scylla-singa resume` it first") from None
    if resp.status_code != 202:
        raise click.ClickException(f"kill refused: {resp.status_code} {resp.text}")
    click.echo(f"killing {job_id}")


@click.command()
@click.argument("job")
@click.option("--proc", "proc", type=int, default=0, show_default=True, help="Process id.")
@click.option("--stderr", "stream", flag_value="stderr", help="Show stderr instead of stdout.")
@click.option("--stdout", "stream", flag_value="stdout", default=True, hidden=True)
@click.option("-f", "--follow", is_flag=True, help="Keep printing new output until the task ends.")
def logs(job: str, proc: int, stream: str, follow: bool) -> None:
    """Print a process's stdout (or stderr), read from its Mesos sandbox."""
    store = _store()
    job_id = _one_job(store, job)
    record = store.load(job_id)
    task = next((t for t in record.tasks.values() if t.proc == proc), None)
    if task is None:
        raise click.ClickException(f"{job_id} has no task for process {proc} (yet)")
    fid = next((f for j, _, f, _ in store.jobs() if j == job_id), None)
    master = store.get_meta(JobStore.leader_key(fid))
    try:
        mesos = MesosHttp(master, mesos_credential())
        url = mesos.agent_url(task.agent_id)
        directory = mesos.sandbox(url, task.task_id)
        if directory is None:
            raise click.ClickException(f"agent {task.hostname} has no sandbox for {task.task_id} any more")
        offset = 0
        while True:
            data, at = mesos.read(url, f"{directory}/{stream}", offset, 65536)
            if data:
                sys.stdout.write(data)
                sys.stdout.flush()
                offset = at + len(data.encode())
                continue
            if not follow:
                return
            current = store.load(job_id).tasks.get(task.task_id)
            if current is None or current.terminal:
                return
            time.sleep(0.5)
    except MesosHttpError as exc:
        raise click.ClickException(f"cannot read the logs: {exc}") from None
