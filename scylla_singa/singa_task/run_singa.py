"""`singa-task`: run one real SINGA process as the framework's task, and report on it.

    1. read the contract's inputs and job.conf; refuse what cannot work (exit 2);
    2. create the workspace, write the conf SINGA is given (derived.py);
    3. one process: `singa-local` (no ZooKeeper); more: meet the attempt's
       other processes in ZooKeeper (rendezvous.py), process 0 running
       `singatool create`, then `singa ... -singa_job ID -host <own address>`
       once processes 0..K-1 have registered, so SINGA's id is K;
    4. relay SINGA's log to stderr unchanged, turn its metrics into PROGRESS
       lines (and POSTs), FINAL from process 0;
    5. exit as the contract says (outcome.py); SIGTERM is passed on to SINGA.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from scylla_singa.contracts import ENV_PROGRESS_TOKEN, FINAL_PREFIX, PROGRESS_PREFIX

from . import conftext, derived, glog, outcome
from .checkpoints import ResumePoint, newest_complete, snapshot
from .task_inputs import BadInput, TaskInputs, read_inputs, usage
from .jobshape import JobShape, read_shape
from .report import Reporter

# The programs: SINGA's own `singa` (the image's `singa` on PATH hands the framework's flags to this
# wrapper), or a program with its own layers such as the rnnlm example's (SCYLLA_SINGA_*_BIN).
SINGA_DIST = os.environ.get("SCYLLA_SINGA_BIN", "/opt/singa/bin/singa")
SINGA_LOCAL = os.environ.get("SCYLLA_SINGA_LOCAL_BIN", "singa-local")
SINGATOOL = os.environ.get("SCYLLA_SINGATOOL_BIN", "singatool")
KILL_GRACE_S = 5.0


class Terminated(BaseException):
    """SIGTERM/SIGINT before SINGA started."""


class TaskError(Exception):
    """Ends the task before SINGA runs: `code` is the exit code, the message one line."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def say(message: str, err: TextIO | None = None) -> None:
    stream = err or sys.stderr
    stream.write(f"singa-task: {message}\n")
    stream.flush()


@dataclass
class Plan:
    """What to run, decided before SINGA starts."""

    inputs: TaskInputs
    shape: JobShape
    conf_text: str
    workspace: Path
    nprocs: int
    scratch: Path
    err: TextIO

    @property
    def distributed(self) -> bool:
        return self.nprocs > 1


def load_plan(inputs: TaskInputs, cwd: Path, err: TextIO) -> Plan:
    try:
        text = inputs.conf.read_text()
    except OSError as exc:
        raise TaskError(outcome.BAD_CONF, f"{inputs.conf}: cannot read: {exc.strerror}") from exc
    try:
        shape = read_shape(text)
    except conftext.ConfTextError as exc:
        raise TaskError(outcome.BAD_CONF, f"{inputs.conf}:{exc}") from exc
    except ValueError as exc:
        raise TaskError(outcome.BAD_CONF, f"{inputs.conf}: {exc}") from exc
    if inputs.cluster_nprocs is not None and inputs.cluster_nprocs != shape.nprocs:
        raise TaskError(outcome.BAD_CONF, f"the cluster file has {inputs.cluster_nprocs} processes but "
                                          f"{inputs.conf}'s cluster section makes {shape.nprocs}")
    if inputs.proc >= shape.nprocs:
        raise TaskError(outcome.BAD_CONF, f"-procs_id {inputs.proc} but {inputs.conf} makes {shape.nprocs} processes")
    workspace = inputs.workspace or shape.workspace
    if not workspace:
        raise TaskError(outcome.BAD_CONF, f"{inputs.conf}: no cluster.workspace and no -workspace")
    if "://" in workspace:
        raise TaskError(outcome.BAD_CONF, f"workspace {workspace}: SINGA 0.3.0 writes checkpoints to local "
                                          "files only; use a local (or mounted) directory")
    ws = (cwd / workspace).resolve()
    try:
        ws.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TaskError(outcome.BAD_CONF, f"cannot create the workspace {ws}: {exc.strerror}") from exc
    if not os.access(ws, os.W_OK | os.X_OK):
        raise TaskError(outcome.BAD_CONF, f"the workspace {ws} is not writable by uid {os.getuid()}: "
                                          "mount a directory this user may write")
    problems = derived.missing_inputs(text, str(inputs.conf), cwd, check_checkpoints=not inputs.resume)
    if problems:
        raise TaskError(outcome.BAD_CONF, "; ".join(problems))
    scratch = Path(tempfile.mkdtemp(prefix="singa-task-"))
    return Plan(inputs, shape, text, ws, shape.nprocs, scratch, err)


def choose_resume(plan: Plan) -> ResumePoint | None:
    """The newest complete checkpoint step, copied aside for this attempt (process 0 only)."""
    if not plan.inputs.resume:
        return None
    point = newest_complete(plan.workspace / "checkpoint", plan.shape.checkpoint_writers)
    if point is None:
        say(f"-resume: no complete checkpoint in {plan.workspace / 'checkpoint'}; starting from step 0", plan.err)
        return None
    copies = plan.workspace / "resume"
    copy = snapshot(point, copies / f"attempt-{plan.inputs.attempt}")
    for old in copies.iterdir():   # earlier attempts' copies: their processes are gone
        if old.name != f"attempt-{plan.inputs.attempt}":
            shutil.rmtree(old, ignore_errors=True)
    say(f"-resume: from step {point.step} ({', '.join(f.name for f in point.files)})", plan.err)
    return copy


def own_address(plan: Plan, deadline: float) -> str:
    """This process's address on the job's network: its cluster.json host, resolved (retried: DNS may lag)."""
    peers = plan.inputs.cluster or ()
    mine = next((p for p in peers if p.id == plan.inputs.proc), None)
    name = mine.host if mine else socket.gethostname()
    while True:
        try:
            return socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise TaskError(outcome.FAILED, f"cannot resolve this process's host {name!r}: {exc}") from exc
            time.sleep(0.5)


def create_singa_job(singa_conf_dir: Path) -> int:
    """A fresh SINGA job id from `singatool create` (ZooKeeper sequence: unique per ZooKeeper)."""
    proc = subprocess.run([SINGATOOL, "create", "-confdir", str(singa_conf_dir)], capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not out or not out[-1].strip().isdigit():
        raise TaskError(outcome.FAILED, f"singatool create failed (exit {proc.returncode}): "
                                        f"{(proc.stderr or proc.stdout).strip()[-500:]}")
    return int(out[-1])


@dataclass
class Run:
    """One SINGA child: its output relayed and read, stop requests from other threads."""

    argv: list[str]
    plan: Plan
    reporter: Reporter
    sink: object
    err: TextIO
    reader: glog.LogReader = field(default_factory=glog.LogReader)
    fatal: glog.Fatal | None = None
    lost: set[int] = field(default_factory=set)
    stop_reason: str | None = None
    signalled: bool = False
    registered_as: int | None = None
    child: subprocess.Popen | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stop(self, reason: str, lost: set[int] | None = None) -> None:
        """Ask SINGA to stop (SIGTERM, then SIGKILL after a grace period); safe from any thread."""
        with self._lock:
            if lost:
                self.lost |= lost
            if self.stop_reason is None:
                self.stop_reason = reason
            child = self.child
        if child is None or child.poll() is not None:
            return
        say(reason, self.err)
        child.terminate()
        threading.Timer(KILL_GRACE_S, lambda: child.poll() is None and child.kill()).start()

    def handle(self, event: glog.Event) -> None:
        if isinstance(event, glog.SingaMetrics):
            self.sink.report(PROGRESS_PREFIX, self.reporter.progress(event))
        elif isinstance(event, glog.Fatal) and self.fatal is None:
            self.fatal = event
        elif isinstance(event, glog.SingaRegistered):
            self.registered_as = event.proc
            if self.plan.distributed and event.proc != self.plan.inputs.proc:
                self.stop(f"SINGA registered as process {event.proc}, not {self.plan.inputs.proc}: "
                          "the registration order was broken")

    def run(self) -> int:
        # SINGA itself never posts progress (this wrapper does): it does not get the job's progress token.
        env = {**{k: v for k, v in os.environ.items() if k != ENV_PROGRESS_TOKEN}, "GLOG_logtostderr": "1"}
        with self._lock:
            # SINGA inherits the working directory without entering it again: under Apache Mesos it is
            # the image's WORKDIR, the sandbox, which is root's and 0750 (a chdir there fails for uid 1000).
            self.child = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                          text=True, errors="replace", bufsize=1)
            if self.stop_reason is not None:
                self.child.terminate()
        assert self.child.stdout is not None
        for line in self.child.stdout:
            self.err.write(line)
            for event in self.reader.feed(line):
                self.handle(event)
        self.err.flush()
        for event in self.reader.flush():
            self.handle(event)
        return self.child.wait()


def run_task(inputs: TaskInputs, out: TextIO, err: TextIO, started: float) -> int:
    from scylla_singa.runtime.progress_sink import ProgressSink

    plan = load_plan(inputs, Path.cwd(), err)
    job = inputs.job or plan.shape.name or "job"
    sink = ProgressSink(inputs.progress_url, out=out, err=err, task=inputs.task, token=inputs.progress_token)
    reporter = Reporter(job, inputs.proc, plan.shape.train_batchsize)
    deadline = time.monotonic() + inputs.startup_timeout_s
    rendezvous = None
    try:
        if plan.distributed:
            rendezvous, argv = prepare_distributed(plan, job, deadline)
        else:
            conf = write_conf(plan, choose_resume(plan))
            argv = [SINGA_LOCAL, "-conf", str(conf)]
        run = Run(argv, plan, reporter, sink, err)
        install_signal_handlers(run)
        if rendezvous is not None:
            rendezvous.watch_peers(lambda lost: run.stop(f"lost peer process(es) {sorted(lost)}", lost))
            watch_startup(rendezvous, run, deadline)
        say(f"running {' '.join(argv)}", err)
        code = run.run()
        if run.signalled:
            say(f"stopped by a signal (SINGA exit {code})", err)
            return 128 + signal.SIGTERM
        result = outcome.decide(code, run.fatal, str(inputs.conf), tuple(sorted(run.lost)))
        if result.code == outcome.FINISHED and run.stop_reason is not None:
            result = outcome.Outcome(outcome.FAILED, run.stop_reason)
        if rendezvous is not None:
            rendezvous.stop_watching()
            if result.code == outcome.FINISHED:
                rendezvous.mark_done()
        if result.code == outcome.FINISHED and inputs.proc == 0:
            sink.report(FINAL_PREFIX, reporter.final(plan.shape.train_steps, time.monotonic() - started))
        say(result.reason, err)
        return result.code
    finally:
        sink.close()
        if rendezvous is not None:
            rendezvous.close()
        shutil.rmtree(plan.scratch, ignore_errors=True)


def write_conf(plan: Plan, resume: ResumePoint | None) -> Path:
    conf = plan.scratch / "job.conf"
    conf.write_text(derived.derive(plan.conf_text, str(plan.workspace), resume))
    return conf


def prepare_distributed(plan: Plan, job: str, deadline: float):
    """Meet the attempt in ZooKeeper; returns (rendezvous, SINGA's argv) once SINGA may register."""
    from .zk import AttemptRendezvous, PeerMissing, ZkUnreachable

    inputs = plan.inputs
    if not inputs.zk_hosts:
        raise TaskError(outcome.BAD_CONF, f"a job of {plan.nprocs} processes needs ZooKeeper: "
                                          "set SCYLLA_ZK_HOSTS (host:port[,host:port])")
    address = own_address(plan, deadline)
    singa_conf = plan.scratch / "singa.conf"
    singa_conf.write_text(f"zookeeper_host: {conftext.quote(inputs.zk_hosts)}\n")
    rendezvous = AttemptRendezvous(inputs.zk_hosts, job, inputs.attempt, inputs.proc, plan.nprocs)
    try:
        rendezvous.connect(max(1.0, deadline - time.monotonic()))
        if inputs.proc == 0:
            singa_job = create_singa_job(plan.scratch)
            resume = choose_resume(plan)
            rendezvous.publish({"singa_job": singa_job, "resume_step": resume.step if resume else None,
                                "resume_files": [str(f) for f in resume.files] if resume else []})
        else:
            info = rendezvous.read_attempt(deadline)
            singa_job = int(info["singa_job"])
            resume = None
            if info.get("resume_step"):
                files = tuple(Path(f) for f in info["resume_files"])
                unseen = [str(f) for f in files if not f.exists()]
                if unseen:
                    raise TaskError(outcome.FAILED, f"process 0 resumes from {', '.join(unseen)}, which this "
                                                    "process cannot see: the workspace must be shared")
                resume = ResumePoint(int(info["resume_step"]), files)
        rendezvous.mark_live()
        conf = write_conf(plan, resume)
        rendezvous.wait_predecessors(singa_job, deadline)
    except PeerMissing as exc:
        rendezvous.close()
        raise TaskError(outcome.PEER_LOST, str(exc)) from exc
    except ZkUnreachable as exc:
        rendezvous.close()
        raise TaskError(outcome.FAILED, str(exc)) from exc
    except BaseException:
        rendezvous.close()
        raise
    say(f"SINGA job {singa_job}, process {inputs.proc} of {plan.nprocs} at {address}", plan.err)
    return rendezvous, [SINGA_DIST, "-conf", str(conf), "-singa_conf", str(singa_conf),
                        "-singa_job", str(singa_job), "-host", address]


def watch_startup(rendezvous, run: Run, deadline: float) -> None:
    """Stop the run (peers lost) if not every process of the attempt has started by `deadline`."""
    from .zk import PeerMissing

    def check() -> None:
        try:
            rendezvous.wait_all_live(deadline)
        except PeerMissing as exc:
            run.stop(str(exc), set(exc.procs))
        except Exception:  # noqa: BLE001 - ZooKeeper trouble here must not kill training
            pass

    threading.Thread(target=check, name="startup-watch", daemon=True).start()


def install_signal_handlers(run: Run) -> None:
    """SIGTERM/SIGINT stop SINGA (as PID 1 the wrapper has no default handlers)."""
    def handler(signum: int, _frame: object) -> None:
        run.signalled = True
        run.stop(f"received signal {signum}; stopping SINGA")

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)


def terminate_early(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    started = time.monotonic()
    out, err = out or sys.stdout, err or sys.stderr
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, terminate_early)
    try:
        inputs = read_inputs(sys.argv[1:] if argv is None else argv)
        if inputs is None:
            out.write(usage())
            return 0
        return run_task(inputs, out, err, started)
    except BadInput as exc:
        err.write(f"{exc}\n")
        return outcome.BAD_CONF
    except TaskError as exc:
        say(str(exc), err)
        return exc.code
    except Terminated:
        say("stopped by a signal before SINGA started", err)
        return 128 + signal.SIGTERM
