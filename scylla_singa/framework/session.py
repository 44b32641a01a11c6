"""`scylla-singa run` and `resume`: wire the framework up, follow jobs to the end.

The order matters: everything that can be refused (job.conf, policy, volume
root, master address) is checked before anything is created, so bad input
leaves nothing behind; after that every resource made is undone in
`finally`, also on Ctrl-C.

What the framework needs from the layers above it comes in as a
SessionWiring, built by the command line (scylla_singa.cli.run_commands):
the running local cluster (its master and WebHDFS), a way to start an
embedded master, and the job view's routes. The framework imports neither
the cluster nor the web UI nor the embedded Mesos.
"""

from __future__ import annotations

import json
import logging
import os
import pwd
import re
import signal
import sys
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

import docker
import requests
from aiohttp import web
from rich.console import Console

from scylla_singa.common.home import allowed_roots, jobs_root, scylla_home
from scylla_singa.contracts import (DEFAULT_COMMAND, ENV_ATTEMPT, ENV_JOB_ID, ENV_PROC_ID, ENV_PROGRESS_TOKEN,
                                    ENV_PROGRESS_URL, ENV_TASK_ID, ENV_WEBHDFS_URL, ENV_ZK_HOSTS)
from scylla_singa.delivery.hdfs import HdfsDelivery
from scylla_singa.delivery.job_files import DeliveryError
from scylla_singa.delivery.volume import VolumeDelivery, ensure_shared_workspace
from scylla_singa.jobconf.errors import JobConfError
from scylla_singa.jobconf.job_limits import JobLimits
from scylla_singa.jobconf.parse import load_job, parse_job_text
from scylla_singa.jobconf.plan import PlanOptions, plan_job
from scylla_singa.mesos.api.credentials import Credential, CredentialsError
from scylla_singa.placement.policy import PolicyError, load_policy
from scylla_singa.swarm.overlays import SwarmError, ensure_swarm
from .api_server import ApiServer
from .control_token import ControlTokenError, ensure_control_token
from .core import CoreConfig, FrameworkCore
from .credential_source import WHERE_CREDENTIALS_COME_FROM, find_credential
from .display import ProgressDisplay
from .job_zookeeper import JobZooKeeper, OwnZooKeeper, SharedZooKeeper, parse_zk_hosts
from .model import Job, JobSpec, JobState, new_job_id
from .progress_book import ProgressBook, from_current_attempt
from .runtime_kind import AUTO, RuntimeKind, RuntimeKindError, guess_note, runtime_kind
from .shell import FrameworkShell
from .store import JobStore, JobStoreError

log = logging.getLogger("scylla_singa.framework")


class UsageError(Exception):
    """Refused before anything was created; exit code 2."""


class LocalCluster(Protocol):
    """What the framework reads of the cluster this machine runs or belongs to (scylla_singa.cluster.state.ClusterInfo)."""

    master: str
    masters: list[str]
    webhdfs: str | None
    zk_hosts: str | None
    credential_file: str | None    # the framework credential its masters accept
    shared_files: bool             # False: its agents' machines do not see this machine's files (init/join)


class EmbeddedMaster(Protocol):
    """A started in-process master with an agent (scylla_singa.mesos.embedded.EmbeddedMesos)."""

    master_address: str
    framework_credential: Credential | None

    def stop(self) -> None: ...


@dataclass(frozen=True)
class SessionWiring:
    """What the layers above the framework hand it (see the module docstring); all optional.

    `local_cluster()` finds the cluster-in-a-box that is up (None when none
    is); `start_embedded(opts)` starts a master and an agent on this
    machine and returns it (the session stops it at the end); `ui_routes`
    makes the job view's routes for a session's API server.
    """

    local_cluster: Callable[[], LocalCluster | None] = lambda: None
    start_embedded: Callable[[RunOptions], EmbeddedMaster] | None = None
    ui_routes: Callable[[Session], list[web.RouteDef]] | None = None


@dataclass
class RunOptions:
    image: str = "singa:latest"
    master: str | None = None
    policy: str = "spread"
    deliver: str | None = None      # None: chosen by `resolve_delivery`
    hdfs: str | None = None
    volume_root: Path | None = None
    max_restarts: int = 2
    gang_timeout_s: float = 30.0
    connect_timeout_s: float = 30.0
    kill_grace_s: float = 10.0
    cpus: float | None = None
    mem_mb: int | None = None
    steps_per_s: float = 10.0
    command: str = DEFAULT_COMMAND
    as_json: bool = False
    advertise_ip: str | None = None
    api_port: int = 0
    agent_resources: str | None = None
    linger_s: float = 0.0
    credential_file: Path | None = None   # --credential; else credential_source.find_credential's places
    runtime: str = AUTO
    zk: str | None = None
    workspace_dir: Path | None = None
    env: tuple[str, ...] = ()
    limits: JobLimits = JobLimits()  # the ceilings on each job's size (jobconf/job_limits.py)
    extra: dict[str, Any] = field(default_factory=dict)


# What the framework itself hands every task (docs/contracts.md): `run --env` may not change it.
FRAMEWORK_ENV = frozenset({ENV_JOB_ID, ENV_PROC_ID, ENV_TASK_ID, ENV_PROGRESS_URL, ENV_PROGRESS_TOKEN, ENV_ZK_HOSTS,
                           ENV_ATTEMPT, ENV_WEBHDFS_URL})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_env(items: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """`run --env NAME=VALUE` items, checked. Raises UsageError saying what is wrong."""
    out = []
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not _ENV_NAME.fullmatch(name):
            raise UsageError(f"--env {item!r}: expected NAME=VALUE (e.g. SCYLLA_SINGA_LOCAL_BIN=singa-rnnlm)")
        if name in FRAMEWORK_ENV:
            raise UsageError(f"--env {name}: the framework sets {name} itself (docs/contracts.md)")
        out.append((name, value))
    return tuple(out)


def image_labels(image: str) -> dict[str, str] | None:
    """The labels of `image` on this machine's Docker engine; None when it does not have it (or no engine answers)."""
    try:
        return dict(docker.from_env(timeout=30).images.get(image).labels or {})
    except (docker.errors.DockerException, requests.RequestException):
        return None


def resolve_runtime(opts: RunOptions, labels_of: Callable[[str], dict[str, str] | None] = image_labels) -> RuntimeKind:
    """Which runtime the jobs' image is (framework/runtime_kind.py); what it cannot do is refused here,
    before anything starts. Raises UsageError."""
    try:
        kind = runtime_kind(opts.runtime, opts.image, labels_of(opts.image) if opts.runtime == AUTO else None)
    except RuntimeKindError as exc:
        raise UsageError(str(exc)) from None
    if kind.apache_singa and opts.deliver == "hdfs":
        raise UsageError(f"--deliver hdfs: {opts.image} is Apache SINGA 0.3.0, which writes its checkpoints to "
                         "local files only, and HDFS delivery gives every process an hdfs:// workspace (singa-task "
                         "would refuse it in each container); use --deliver volume (the default), or the Python "
                         "runtime (--image singa-py:latest), which writes checkpoints through WebHDFS")
    if opts.zk is not None:
        try:
            opts.zk = parse_zk_hosts(opts.zk)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if opts.workspace_dir is not None and opts.deliver not in (None, "volume"):
        raise UsageError("--workspace is a host directory mounted into the containers: it needs --deliver volume")
    return kind


def build_specs(conf_paths: list[str], opts: RunOptions, kind: RuntimeKind | None = None) -> list[JobSpec]:
    """Parse, validate and plan each job.conf and check the policy. Raises UsageError."""
    try:
        load_policy(opts.policy)
    except PolicyError as exc:
        raise UsageError(str(exc)) from None
    runtime = (kind or RuntimeKind(JobSpec.runtime, "default")).name
    env = parse_env(opts.env)
    workspace_dir = str(opts.workspace_dir.resolve()) if opts.workspace_dir is not None else None
    specs = []
    for path in conf_paths:
        try:
            parsed = load_job(path)
            plan_job(parsed, PlanOptions(opts.cpus, opts.mem_mb, opts.steps_per_s, opts.limits))
        except JobConfError as exc:
            raise UsageError(str(exc)) from None
        lim = opts.limits
        specs.append(JobSpec(new_job_id(parsed.proto.name), str(Path(path).resolve()), parsed.text, opts.image,
                             opts.policy, opts.deliver, opts.command, opts.max_restarts, opts.cpus, opts.mem_mb,
                             opts.steps_per_s, runtime=runtime, workspace_dir=workspace_dir, env=env,
                             max_processes=lim.max_processes, max_groups=lim.max_groups,
                             max_workers=lim.max_workers, max_servers=lim.max_servers))
    return specs


def resolve_delivery(opts: RunOptions, kind: RuntimeKind,
                     local_cluster: Callable[[], LocalCluster | None] = lambda: None) -> None:
    """Choose how job files travel when the user did not say, and refuse volume delivery where the
    agents' machines cannot see this machine's files (a cluster of `cluster init`/`join`): HDFS there,
    a bind mount of this machine's job directory everywhere else. Raises UsageError."""
    info = local_cluster()
    apart = (info is not None and not getattr(info, "shared_files", True)
             and (opts.master is None or opts.master in (info.master, *info.masters)))
    if opts.deliver is None:
        opts.deliver = "hdfs" if apart and not kind.apache_singa else "volume"
    if apart and opts.deliver == "volume":
        why = (f" {opts.image} is Apache SINGA 0.3.0, which needs local files for its checkpoints (so no HDFS "
               "delivery either): run it on a cluster of one machine (`cluster up`) or the embedded default"
               if kind.apache_singa else " use --deliver hdfs (the default on such a cluster)")
        raise UsageError("--deliver volume: the machines of this cluster (made with `cluster init`/`join`) do not "
                         "see this machine's files, so containers on the others could not mount the job's "
                         f"directory;{why}")


def make_delivery(opts: RunOptions, local_cluster: Callable[[], LocalCluster | None] = lambda: None):
    try:
        if opts.deliver == "hdfs":
            if not opts.hdfs:
                info = local_cluster()
                opts.hdfs = info.webhdfs if info is not None else None
            if not opts.hdfs:
                raise UsageError("--deliver hdfs needs --hdfs http://NAMENODE:9870 (the WebHDFS address), "
                                 "or a local cluster started with `scylla-singa cluster up --hdfs`")
            return HdfsDelivery(opts.hdfs)
        return VolumeDelivery(opts.volume_root or jobs_root(), allowed_roots())
    except DeliveryError as exc:
        raise UsageError(str(exc)) from None


class Session:
    """One framework process: master connection, API server, shell, and what they made."""

    def __init__(self, opts: RunOptions, console: Console, wiring: SessionWiring = SessionWiring()) -> None:
        self.opts, self.console, self.wiring = opts, console, wiring
        self.stack = ExitStack()
        try:
            self.store = JobStore(scylla_home() / "framework.sqlite")
        except (JobStoreError, OSError) as exc:
            raise UsageError(str(exc)) from None
        self.book = ProgressBook()
        self.shell: FrameworkShell | None = None
        self.embedded = False  # runs on an embedded master and agent of its own (this machine)
        self.credential: Credential | None = None   # what it authenticates to Mesos with (None: anonymous)

    def open(self, framework_id: str | None = None, adopt: list[Job] = ()) -> None:
        """Connect everything. Jobs to `adopt` are handed to the core before the
        driver subscribes, so reconciliation already knows their tasks (an
        unknown task would be killed as an orphan)."""
        opts = self.opts
        delivery = make_delivery(opts, self.wiring.local_cluster)
        manager, advertise = self._swarm()
        if opts.master or opts.credential_file:   # else the master found below brings its own
            self.credential = self._find_credential(_cluster_credential_file(self.wiring.local_cluster()))
        master = opts.master or self._local_master()
        api = self._start_api(framework_id)
        port = api.port
        self.stack.callback(api.stop)
        self.api_url = f"http://{advertise}:{port}"
        core = FrameworkCore(CoreConfig(gang_timeout_s=opts.gang_timeout_s, kill_grace_s=opts.kill_grace_s,
                                        progress_url=f"{self.api_url}/progress", one_machine=self.embedded))
        self.shell = FrameworkShell(core, self.store, delivery, manager, self.book, notify=self._tell,
                                    zookeeper=self._zookeeper(manager, master))
        for job in adopt:
            self.shell.adopt(job)
        self.shell.start(master, framework_id, user=pwd.getpwuid(os.getuid()).pw_name,
                         credential=self.credential)
        self.stack.callback(self._stop_shell)
        try:
            subscribed = _wait_interruptibly(self.shell.subscribed, opts.connect_timeout_s)
        except RuntimeError as exc:   # pymesos raises the master's refusal in the main thread
            if "HTTP 401" in str(exc):
                given = f"principal {self.credential.principal}" if self.credential else "none given"
                raise UsageError(f"the Mesos master at {master} refused this framework's credentials ({given}): "
                                 f"{WHERE_CREDENTIALS_COME_FROM}") from None
            raise UsageError(f"the Mesos master at {master} refused the subscription: {exc}") from None
        if not subscribed:
            why = f": {self.shell.fatal}" if self.shell.fatal else ""
            raise UsageError(f"could not subscribe to the Mesos master at {master} within "
                             f"{opts.connect_timeout_s:g}s{why}; check --master and that the master is up")
        fid = self.shell.driver.framework_id
        self.store.set_meta(f"api:{fid}", f"http://127.0.0.1:{port}")
        self.store.set_meta(JobStore.leader_key(fid), self.shell.master_address() or master)
        self.store.set_meta(JobStore.master_url_key(fid), master)

    def _find_credential(self, cluster_file: Path | None) -> Credential | None:
        try:
            return find_credential(self.opts.credential_file, cluster_file)
        except CredentialsError as exc:
            raise UsageError(str(exc)) from None

    def _tell(self, line: str) -> None:
        """One line for the user about the master link (printed above the progress bars)."""
        self.console.print(line, markup=False, highlight=False)

    def _zookeeper(self, manager: docker.DockerClient, master: str) -> JobZooKeeper:
        """Where real SINGA jobs of several processes meet: `--zk`, else the local cluster's ZooKeeper when
        the jobs run on that cluster, else a ZooKeeper of each job's own (framework/job_zookeeper.py)."""
        if self.opts.zk:
            return SharedZooKeeper(self.opts.zk)
        info = self.wiring.local_cluster()
        zk_hosts = getattr(info, "zk_hosts", None)
        if info is not None and zk_hosts and master in (info.master, *info.masters):
            return SharedZooKeeper(zk_hosts)
        return OwnZooKeeper(manager)

    def _start_api(self, framework_id: str | None) -> ApiServer:
        """Serve the API, on the port the framework had before when it is resumed.

        Running containers POST their progress to the URL they were launched
        with; a resumed framework that moved to another port would never
        hear from them again. So `resume` takes the old port back when it is
        free, and says so when it is not.
        """
        token = self._control_token()
        previous = self._previous_api_port(framework_id) if framework_id and not self.opts.api_port else 0
        for port in ([previous] if previous else []) + [self.opts.api_port]:
            api = ApiServer(self.book, self._jobs_view, self._on_progress, self._kill, token, self._progress_token,
                            port=port)
            self._add_ui_routes(api)
            try:
                api.start()
                return api
            except RuntimeError as exc:
                if port == self.opts.api_port:
                    raise UsageError(f"{exc}; pick another --api-port or leave it 0 for any free one") from None
                self.console.print(f"note: port {port}, where this framework's running containers send their "
                                   f"progress, is taken ({exc}); their progress reaches this session only "
                                   "through their logs")
        raise AssertionError("unreachable: the last port tried is --api-port, whose failure raises")

    def _previous_api_port(self, framework_id: str) -> int:
        url = self.store.get_meta(f"api:{framework_id}")
        try:
            return int(url.rsplit(":", 1)[1]) if url else 0
        except ValueError:
            return 0

    def _stop_shell(self) -> None:
        assert self.shell is not None
        live = [j for j in self.jobs() if not j.state.terminal]
        # Unregister only when nothing runs any more; otherwise keep the
        # framework (failover) so `scylla-singa resume` can carry the jobs on.
        self.shell.stop(teardown=not live)

    def _swarm(self) -> tuple[docker.DockerClient, str]:
        try:
            client = docker.from_env(timeout=120)
            state = ensure_swarm(client)
        except docker.errors.DockerException as exc:
            raise UsageError(f"no Docker engine answers ({exc.__class__.__name__}); job networks need one "
                             "that is (or can become) a swarm manager: start dockerd or set DOCKER_HOST") from None
        except SwarmError as exc:
            raise UsageError(str(exc)) from None
        return client, self.opts.advertise_ip or state.node_addr

    def _local_master(self) -> str:
        """A running cluster-in-a-box's master, else an embedded master and agent."""
        info = self.wiring.local_cluster()
        if info is not None:
            if any(_answers(m) for m in info.masters):
                self.console.print(f"using the local cluster's master {info.master}")
                self.credential = self.credential or self._find_credential(_cluster_credential_file(info))
                return info.master
            self.console.print("note: a local cluster is recorded but its masters do not answer; "
                               "using an embedded master (`scylla-singa cluster down` clears the record)")
        if self.wiring.start_embedded is None:
            raise UsageError("no master to run on: give --master HOST:PORT or zk://HOST:2181/mesos")
        embedded = self.wiring.start_embedded(self.opts)
        self.stack.callback(embedded.stop)
        self.embedded = True
        self.credential = embedded.framework_credential
        self.console.print(f"started an embedded Mesos master at {embedded.master_address} with one agent")
        return embedded.master_address

    def _control_token(self) -> str:
        try:
            return ensure_control_token(scylla_home())
        except ControlTokenError as exc:
            raise UsageError(str(exc)) from None

    def _add_ui_routes(self, api: ApiServer) -> None:
        if self.wiring.ui_routes is not None:
            api.extra_routes += self.wiring.ui_routes(self)

    def jobs(self) -> list[Job]:
        if self.shell is None:
            return []
        with self.shell.lock:
            return list(self.shell.core.jobs.values())

    def _jobs_view(self) -> list[dict[str, Any]]:
        return [job_summary(j) for j in self.jobs()]

    def _on_progress(self, p: dict[str, Any]) -> bool:
        """Keep a report of a job of ours from its current attempt; False when it is dropped."""
        job = self.shell.job(p["job"]) if self.shell else None
        if job is None or not from_current_attempt(p, job.tasks):
            return False
        self.store.add_progress(p["job"], p)
        return True

    def _progress_token(self, job_id: str) -> str | None:
        """The progress token of a job of this session (None when it runs no such job)."""
        job = self.shell.job(job_id) if self.shell else None
        return job.progress_token if job is not None else None

    def _kill(self, job_id: str) -> bool:
        return bool(self.shell and self.shell.kill(job_id))

    def follow(self, job_ids: list[str]) -> list[Job]:
        """Show progress until every job has ended; first Ctrl-C (or SIGTERM) kills them, a second one leaves."""
        assert self.shell is not None
        previous = _interrupt_on_sigterm()
        try:
            return self._follow(job_ids)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _follow(self, job_ids: list[str]) -> list[Job]:
        assert self.shell is not None
        interrupted = 0
        with ProgressDisplay(self.console, self.book) as display:
            while True:
                try:
                    jobs = [j for j in self.jobs() if j.job_id in job_ids]
                    display.update(jobs)
                    if all(self.shell.ended.get(j).is_set() for j in job_ids):
                        display.update([j for j in self.jobs() if j.job_id in job_ids])
                        return jobs
                    if self.shell.fatal and "failed over" in self.shell.fatal.lower():
                        raise UsageError("another scylla-singa took these jobs over (framework failed over)")
                    time.sleep(0.25)
                except KeyboardInterrupt:
                    interrupted += 1
                    if interrupted > 1:
                        raise
                    self.console.print("stopping: killing the jobs (Ctrl-C again to leave them running)")
                    for j in job_ids:
                        self.shell.kill(j)

    def linger(self, seconds: float) -> None:
        """Keep the job view (and an embedded master's UI) up a while after the jobs ended."""
        if seconds <= 0:
            return
        self.console.print(f"the job view {self.api_url}/ stays up for {seconds:g}s more (Ctrl-C to quit now)")
        try:
            time.sleep(seconds)
        except KeyboardInterrupt:
            pass

    def close(self) -> None:
        self.stack.close()


def _interrupt_on_sigterm():
    """Make SIGTERM (`kill`, `systemctl stop`, a CI job's timeout) stop the jobs as a first Ctrl-C does.

    Without it the process died at once: on the embedded default its master and
    agent died with it and the jobs' containers ran on, owned by no one. Returns
    the handler it replaced (None off the main thread, where none can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt
    return signal.signal(signal.SIGTERM, interrupt)


def _wait_interruptibly(event: threading.Event, timeout_s: float) -> bool:
    """Event.wait in short slices: pymesos reports a refused SUBSCRIBE by `_thread.interrupt_main()`, which
    only sets a flag the main thread acts on between bytecodes, never inside one long wait."""
    deadline = time.monotonic() + timeout_s
    while not event.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            return False
    return True


def _cluster_credential_file(info: LocalCluster | None) -> Path | None:
    path = getattr(info, "credential_file", None)
    return Path(path) if path else None


def _answers(master: str) -> bool:
    try:
        return requests.get(f"http://{master}/health", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def job_summary(job: Job) -> dict[str, Any]:
    final = job.result.get("final", {})
    return {
        "job": job.job_id, "state": job.state.value, "name": job.plan.job,
        "test_accuracy": final.get("test_accuracy"), "steps": final.get("steps"), "restarts": job.restarts,
        "procs": [{"id": t.proc, "agent": t.hostname, "state": t.state, "task": t.task_id}
                  for t in sorted(job.tasks.values(), key=lambda t: t.proc)],
        "waiting_reason": job.waiting_reason, "failure": job.failure, "policy": job.spec.policy,
        "restart_reasons": job.restart_reasons,
    }


def report(jobs: list[Job], console: Console, as_json: bool) -> int:
    """Print each job's outcome; exit code 0 only when every job finished."""
    for job in jobs:
        s = job_summary(job)
        if job.state is JobState.FINISHED:
            acc = s["test_accuracy"]
            # Apache SINGA tests every test_freq steps, not after the last one: say which test it was.
            tested = job.result.get("final", {}).get("test_step")
            when = f" (tested at step {tested})" if tested is not None and tested != s["steps"] else ""
            console.print(f"{job.job_id}: FINISHED after {s['steps']} steps, test accuracy "
                          f"{acc if acc is None else format(acc, '.3f')}{when}, restarts {job.restarts}")
        else:
            console.print(f"{job.job_id}: {job.state.value}: {job.failure or 'no reason recorded'}")
            for line in job.result.get("last_lines", []):
                console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)  # log lines as they are
        if as_json:
            out = {k: s[k] for k in ("job", "state", "test_accuracy", "steps", "restarts")}
            out["procs"] = [{k: p[k] for k in ("id", "agent", "state")} for p in s["procs"]]
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    return 0 if all(j.state is JobState.FINISHED for j in jobs) else 1


def run_jobs(conf_paths: list[str], opts: RunOptions, wiring: SessionWiring = SessionWiring()) -> int:
    console = Console(stderr=opts.as_json, soft_wrap=True)  # whole lines: logs are grepped
    kind = resolve_runtime(opts)
    resolve_delivery(opts, kind, wiring.local_cluster)
    specs = build_specs(conf_paths, opts, kind)
    make_delivery(opts, wiring.local_cluster)  # refuse a bad volume root before anything starts
    if opts.workspace_dir is not None:
        try:
            ensure_shared_workspace(opts.workspace_dir, allowed_roots())
        except DeliveryError as exc:
            raise UsageError(str(exc)) from None
    if kind.guessed and any(plan_job(parse_job_text(s.conf_text, s.conf_path), s.plan_options).nprocs > 1
                            for s in specs):
        console.print(guess_note(kind))
    session = Session(opts, console, wiring)
    orphans = [j for j in session.store.live_jobs()]
    if orphans:
        console.print(f"note: {len(orphans)} job(s) of an earlier scylla-singa are still live "
                      f"({', '.join(j.job_id for j in orphans)}); `scylla-singa resume` carries them on")
    try:
        session.open()
        console.print(f"framework {session.shell.driver.framework_id} on {session.shell.master_address()}; "
                      f"job view {session.api_url}/ (`scylla-singa ui` prints it with its sign-in token)")
        for spec in specs:
            session.shell.submit(spec)
            console.print(f"submitted {spec.job_id} ({Path(spec.conf_path).name}, policy {spec.policy})")
        jobs = session.follow([s.job_id for s in specs])
        code = report(jobs, console, opts.as_json)
        session.linger(opts.linger_s)
        return code
    finally:
        session.close()


def resume_jobs(job_prefix: str | None, opts: RunOptions, wiring: SessionWiring = SessionWiring()) -> int:
    """Carry on the live jobs of an earlier framework process (same framework id)."""
    console = Console(stderr=opts.as_json, soft_wrap=True)  # whole lines: logs are grepped
    session = Session(opts, console, wiring)
    live = session.store.live_jobs()
    if job_prefix:
        live = [j for j in live if j.job_id.startswith(job_prefix)]
    if not live:
        raise UsageError("no live jobs to resume" + (f" matching {job_prefix!r}" if job_prefix else ""))
    fid = _framework_of(session.store, live[0].job_id)
    live = [j for j in live if _framework_of(session.store, j.job_id) == fid]
    if not opts.master:
        opts.master = session.store.get_meta(JobStore.master_url_key(fid)) or \
            session.store.get_meta(JobStore.leader_key(fid))
    try:
        session.open(framework_id=fid, adopt=live)
        console.print(f"resumed framework {fid}: {', '.join(j.job_id for j in live)}")
        jobs = session.follow([j.job_id for j in live])
        return report(jobs, console, opts.as_json)
    finally:
        session.close()


def _framework_of(store: JobStore, job_id: str) -> str | None:
    for jid, _, fid, _ in store.jobs():
        if jid == job_id:
            return fid
    return None


__all__ = ["RunOptions", "SessionWiring", "UsageError", "run_jobs", "resume_jobs", "signal"]
