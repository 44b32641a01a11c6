"""`singa -conf JOB.conf [-procs_id K] [-cluster FILE] [-workspace DIR] [-resume]`: one SINGA process.

The shell around the state machines: it parses flags, loads the job with the
project's job model (spec.py), prepares this process's workers (model
replica, data) and servers (initial or checkpointed slices), then runs one
loop: poll the ZeroMQ ROUTER (cluster.poll_time ms, or not at all while
local work is queued), feed what arrives to the ProcessMachine, deliver one
local message, tick the clock, and execute the instructions that come back.
With one process there are no sockets at all.

Environment: SCYLLA_JOB_ID (the "job" of every report; default: the
cluster file's job, else job.conf's name), SCYLLA_PROC_ID (default for
-procs_id), SCYLLA_PROGRESS_URL with SCYLLA_PROGRESS_TOKEN, SCYLLA_WEBHDFS_URL and HADOOP_USER_NAME
(hdfs:// workspaces), SCYLLA_PEER_TIMEOUT (s, default 30),
SCYLLA_STARTUP_TIMEOUT (s, default 120), SCYLLA_HEARTBEAT_INTERVAL (s, default 1).

Exit codes: 0 finished, 2 bad configuration, 3 a peer lost or never
appeared, 1 anything else (errors.py).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import urllib.parse  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402

from scylla_singa.common.transition_table import InstructionDispatch  # noqa: E402
from scylla_singa.contracts import (ENV_JOB_ID, ENV_PROC_ID, ENV_PROGRESS_TOKEN, ENV_PROGRESS_URL,  # noqa: E402
                                    ENV_TASK_ID)
from scylla_singa.contracts import ENV_WEBHDFS_URL  # noqa: E402
from scylla_singa.jobconf import JobConfError  # noqa: E402
from . import data as data_mod  # noqa: E402
from .checkpoint import (CKPT_RE, LocalStore, MARKER_RE, Store, StoreError, WebHdfsStore, checkpoint_name,
                         encode_checkpoint, load_slice, marker_name, open_store, resumable_steps)
from .cluster_file import ClusterFile, load_cluster  # noqa: E402
from .machine_events import (CheckpointWritten, Exit, Log, ProcReceived, ProcRunLocal, ProcStarted, ProcTick,
                             Report, SendTo, WriteCheckpoint, WriteMarker)
from .messages import Msg, proc_addr, server_addr, worker_addr  # noqa: E402
from .process import ProcessConfig, ProcessMachine  # noqa: E402
from .progress_sink import ProgressSink  # noqa: E402
from .runtime_errors import EXIT_CONFIG, EXIT_OTHER, EXIT_PEER, PeerError, SingaConfigError  # noqa: E402
from .server import ServerMachine  # noqa: E402
from .spec import TrainingSpec, load_spec  # noqa: E402
from .updaters import init_state  # noqa: E402
from .worker import WorkerMachine  # noqa: E402

TICK_S = 0.2


def log(message: str) -> None:
    sys.stderr.write(f"singa: {message}\n")
    sys.stderr.flush()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="singa", allow_abbrev=False,
                                description="Run one process of a SINGA job (SINGA v0 compatible runtime).")
    p.add_argument("-conf", "--conf", required=True, metavar="JOB.conf", help="the job configuration")
    p.add_argument("-procs_id", "--procs_id", type=int, default=None, metavar="K",
                   help="this process's id (default: $SCYLLA_PROC_ID, else 0)")
    p.add_argument("-cluster", "--cluster", default=None, metavar="FILE",
                   help="cluster.json: process id -> host and port (needed when the job has several processes)")
    p.add_argument("-workspace", "--workspace", default=None, metavar="DIR",
                   help="workspace for checkpoints (default: cluster.workspace, else ./workspace); "
                        "a local path or hdfs://host[:port]/path")
    p.add_argument("-resume", "--resume", action="store_true",
                   help="continue from the newest complete checkpoint in the workspace")
    p.add_argument("-peer_timeout", "--peer_timeout", type=float, default=None, metavar="S",
                   help="seconds without a message before a peer counts as lost (default 30)")
    p.add_argument("-startup_timeout", "--startup_timeout", type=float, default=None, metavar="S",
                   help="seconds to wait for every peer at start (default 120)")
    return p.parse_args(argv)


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise SingaConfigError(f"{name}={raw!r} is not a number of seconds") from None


@dataclass
class Setup:
    """Everything prepared before the loop starts."""

    spec: TrainingSpec
    proc: int
    job_id: str
    cluster: ClusterFile | None
    store: Store
    resume_store: Store
    resume_only_step: int | None
    config: ProcessConfig


def prepare(args: argparse.Namespace) -> Setup:
    """Load and check everything this process needs. Raises JobConfError / SingaConfigError (exit 2)."""
    spec = load_spec(args.conf)
    proc = args.procs_id if args.procs_id is not None else int(os.environ.get(ENV_PROC_ID) or 0)
    if not 0 <= proc < spec.nprocs:
        raise SingaConfigError(f"-procs_id {proc} is out of range: the job has {spec.nprocs} process(es), "
                               f"ids 0..{spec.nprocs - 1}")
    cluster = None
    if args.cluster:
        cluster = load_cluster(args.cluster, spec.nprocs)
    elif spec.nprocs > 1:
        raise SingaConfigError(f"the job has {spec.nprocs} processes (cluster section); give -cluster FILE "
                               "naming each process's host and port")
    workspace = args.workspace or spec.proto.cluster.workspace or "./workspace"
    webhdfs, user = os.environ.get(ENV_WEBHDFS_URL), os.environ.get("HADOOP_USER_NAME")
    store = open_store(workspace, webhdfs, user)
    resume_store, only_step = store, None
    if spec.proto.checkpoint_path:
        resume_store, only_step = _checkpoint_path_store(spec.proto.checkpoint_path[0], webhdfs, user)
    resume = args.resume or bool(spec.proto.checkpoint_path)
    hosts_group0 = any(g == 0 for g, _ in spec.procs[proc].servers)
    steps = None
    if resume and hosts_group0:
        steps = resumable_steps(resume_store, proc, writes_slices=True)
        if only_step is not None:
            steps = tuple(s for s in steps if s == only_step)
    job_id = os.environ.get(ENV_JOB_ID) or (cluster.job if cluster and cluster.job else spec.name)
    config = ProcessConfig(
        proc=proc, nprocs=spec.nprocs,
        peers={p.id: p.where for p in cluster.procs} if cluster else {},
        heartbeat_s=_env_float("SCYLLA_HEARTBEAT_INTERVAL", 1.0),
        peer_timeout_s=args.peer_timeout or _env_float("SCYLLA_PEER_TIMEOUT", 30.0),
        startup_timeout_s=args.startup_timeout or _env_float("SCYLLA_STARTUP_TIMEOUT", 120.0),
        resume=resume, resumable_steps=steps,
        checkpoint_procs=frozenset(p.id for p in spec.procs if any(g == 0 for g, _ in p.servers)))
    return Setup(spec, proc, job_id, cluster, store, resume_store, only_step, config)


def _checkpoint_path_store(path: str, webhdfs: str | None, user: str | None) -> tuple[Store, int | None]:
    """checkpoint_path names a checkpoint directory, or a file in one (then only that step)."""
    base = path.rstrip("/").rsplit("/", 1)
    name = base[-1] if len(base) == 2 else ""
    step = None
    m = CKPT_RE.match(name) or MARKER_RE.match(name)
    if m:
        step, path = int(m.group(1)), base[0]
    if path.startswith("hdfs://"):
        parts = urllib.parse.urlsplit(path)
        return WebHdfsStore(webhdfs or f"http://{parts.hostname}:9870", parts.path, user or "singa"), step
    return LocalStore(path), step


def entity_factory(setup: Setup, clock, started_at: float):
    """make_entities(start_step) for the ProcessMachine; models and data are loaded right away."""
    spec, proc = setup.spec, setup.proc
    me = spec.procs[proc]
    prepared = {}
    for g, j in me.workers:
        model = spec.build_model()
        streams = {"train": data_mod.train_stream(model.nets["train"].input.proto, g, j,
                                                  spec.shape.nworkers_per_group, spec.seed)}
        if (g, j) == (0, 0):
            for phase in ("test", "validate"):
                if phase in model.nets:
                    streams[phase] = data_mod.eval_stream(model.nets[phase].input.proto)
        for k, layer in enumerate(model.dropout_layers()):
            layer.rng = np.random.default_rng([spec.seed, g, j, 1000 + k])
        prepared[(g, j)] = (model, streams)
    bounds = spec.server_bounds()
    initial = spec.layout.initial_values(spec.seed) if me.servers else None

    def make(start: int):
        workers = [WorkerMachine(spec, g, j, model, streams, start, clock, setup.job_id, proc, started_at)
                   for (g, j), (model, streams) in prepared.items()]
        servers = []
        for g, j in me.servers:
            lo, hi = bounds[j]
            values = state = None
            if g == 0:  # groups > 0 start from the master copy (server.py)
                values = initial[lo:hi].copy()
                if start > 0:
                    s = load_slice(setup.resume_store, start, proc, lo, hi, spec.layout.signature())
                    values = s.values
                    fresh = init_state(spec.updater, hi - lo)
                    state = s.state if set(s.state) == set(fresh) else fresh
            servers.append(ServerMachine(spec, g, j, start, values, state))
        return workers, servers
    return make


class _Stop(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Terminated(Exception):
    pass


class Shell:
    """Executes the ProcessMachine's instructions and feeds it events, until it says Exit."""

    def __init__(self, setup: Setup, machine: ProcessMachine, transport, sink: ProgressSink, clock) -> None:
        self.setup, self.machine, self.transport, self.sink, self.clock = setup, machine, transport, sink, clock
        self.poll_ms = max(1, min(setup.spec.proto.cluster.poll_time, 1000))
        self._do = InstructionDispatch("the singa process's shell", {
            SendTo: self._send_to, Report: self._report, WriteCheckpoint: self._checkpoint,
            WriteMarker: self._marker, Log: self._log, Exit: self._exit})

    def run(self) -> int:
        try:
            self.execute(self.machine.handle(ProcStarted(self.clock())))
            next_tick = self.clock() + TICK_S
            while True:
                busy = self.machine.has_local_work
                if self.transport is not None:
                    for msg in self.transport.receive(0 if busy else self.poll_ms):
                        self.execute(self.machine.handle(ProcReceived(msg, self.clock())))
                elif not busy:
                    time.sleep(self.poll_ms / 1000)
                if self.machine.has_local_work:
                    self.execute(self.machine.handle(ProcRunLocal(self.clock())))
                now = self.clock()
                if now >= next_tick:
                    next_tick = now + TICK_S
                    self.execute(self.machine.handle(ProcTick(now)))
        except _Stop as stop:
            if stop.message:
                log(stop.message)
            return stop.code
        except _Terminated:
            return self.abort(EXIT_OTHER, f"process {self.setup.proc} was terminated (SIGTERM)")
        except (SingaConfigError, JobConfError) as exc:
            return self.abort(EXIT_CONFIG, str(exc))
        except PeerError as exc:
            return self.abort(EXIT_PEER, str(exc))
        except Exception as exc:  # noqa: BLE001 - any failure must still tell the peers
            traceback.print_exc()
            return self.abort(EXIT_OTHER, f"process {self.setup.proc} failed: {type(exc).__name__}: {exc}")

    def abort(self, code: int, message: str) -> int:
        log(message)
        if self.transport is not None:
            for k in range(self.setup.spec.nprocs):
                if k != self.setup.proc:
                    self.transport.send(k, Msg("ABORT", proc_addr(self.setup.proc), proc_addr(k), 0, None,
                                               {"reason": message}, self.setup.proc))
        return code

    def execute(self, instructions: list) -> None:
        """Carry out the machine's instructions in order; what one returns (the machine's answer to a
        checkpoint written) goes first. An unknown instruction raises UnknownInstruction."""
        work = list(instructions)
        while work:
            work[:0] = self._do(work.pop(0)) or []

    def _send_to(self, ins: SendTo) -> None:
        self.transport.send(ins.proc, ins.msg)

    def _report(self, ins: Report) -> None:
        self.sink.report(ins.kind, ins.payload)

    def _checkpoint(self, ins: WriteCheckpoint) -> list:
        return self.machine.handle(self._write_checkpoint(ins))

    def _marker(self, ins: WriteMarker) -> None:
        self._write_marker(ins.step)

    @staticmethod
    def _log(ins: Log) -> None:
        log(ins.message)

    @staticmethod
    def _exit(ins: Exit) -> None:
        raise _Stop(ins.code, ins.message)

    def _write_checkpoint(self, ins: WriteCheckpoint) -> CheckpointWritten:
        return write_checkpoint(self.setup.store, self.setup.proc, ins, self.setup.spec.layout.signature())

    def _write_marker(self, step: int) -> None:
        error = write_marker(self.setup.store, step)
        if error:
            log(error)


def write_checkpoint(store: Store, proc: int, ins: WriteCheckpoint, signature: list) -> CheckpointWritten:
    """Write this process's slices of step `ins.step`; the event says whether it worked."""
    try:
        store.write_atomic(checkpoint_name(ins.step, proc), encode_checkpoint(ins.step, proc, ins.slices, signature))
        return CheckpointWritten(ins.step, True)
    except (StoreError, OSError) as exc:
        return CheckpointWritten(ins.step, False, str(exc))


def write_marker(store: Store, step: int) -> str:
    """Write step `step`'s completion marker; returns an error message, or "" when it worked."""
    try:
        store.write_atomic(marker_name(step), f'{{"step": {step}}}\n'.encode())
        return ""
    except (StoreError, OSError) as exc:
        return f"checkpoint step {step}: cannot write its marker: {exc}"


def owner_map(spec: TrainingSpec) -> dict[str, int]:
    """Address of every worker and server -> the process hosting it."""
    return {(worker_addr(g, j) if kind == "w" else server_addr(g, j)): k for (kind, g, j), k in spec.owner().items()}


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    clock = time.monotonic
    setup = prepare(args)
    spec, proc = setup.spec, setup.proc
    me = spec.procs[proc]
    make = entity_factory(setup, clock, started)
    owner = owner_map(spec)
    transport = None
    if spec.nprocs > 1:
        from .transport import ZmqTransport
        transport = ZmqTransport(proc, setup.cluster.procs)
    where = f"listening on port {setup.cluster.procs[proc].port}" if transport else "single process"
    log(f"job {setup.job_id}: process {proc} of {spec.nprocs} hosts workers {list(me.workers)} and servers "
        f"{list(me.servers)}; {where}; workspace {setup.store.describe()}")
    sink = ProgressSink(os.environ.get(ENV_PROGRESS_URL), task=os.environ.get(ENV_TASK_ID),
                        token=os.environ.get(ENV_PROGRESS_TOKEN))
    machine = ProcessMachine(setup.config, owner, make)
    code = EXIT_OTHER
    try:
        code = Shell(setup, machine, transport, sink, clock).run()
    finally:
        sink.close()
        if transport is not None:
            transport.close(linger_ms=2000 if code else 500)
    return code


def main(argv: list[str] | None = None) -> int:
    """The `singa` command. Returns the exit code (0, 1, 2 or 3)."""
    def on_term(signum, frame):
        raise _Terminated()
    try:
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:
        pass  # not the main thread (tests); keep the default
    try:
        args = parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return run(args)
    except (JobConfError, SingaConfigError) as exc:
        log(str(exc))
        return EXIT_CONFIG
    except PeerError as exc:
        log(str(exc))
        return EXIT_PEER
    except StoreError as exc:
        log(f"checkpoint store: {exc}")
        return EXIT_OTHER
    except _Terminated:
        log("terminated (SIGTERM) before training started")
        return EXIT_OTHER
    except KeyboardInterrupt:
        return EXIT_OTHER
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        return EXIT_OTHER


if __name__ == "__main__":
    sys.exit(main())
