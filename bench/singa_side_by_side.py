"""7. Real Apache SINGA side by side with the Python runtime, and the framework's cost over running SINGA by hand.

The same confs run on `singa:latest` (Apache SINGA 0.3.0, through
singa-task) and on `singa-py:latest` (the project's Python runtime), each
image in two ways, one after another in one run:

- **framework**: `scylla-singa run --json --image IMAGE --runtime R
  --max-restarts 0 --workspace W CONF` with a fresh `SCYLLA_HOME` and no
  `--master`, i.e. what a user types: the embedded master and agent start,
  the job is planned, placed, its overlay made, the container started by
  the agent, SINGA trains, the job is cleaned up, `run` exits;
- **by hand**: `docker run --rm` of the same image and conf as the images
  document it (`singa-local -conf JOB.conf` with `GLOG_logtostderr=1` for
  Apache SINGA, `singa -conf JOB.conf` for singa-py), the workspace
  bind-mounted at `/workspace`, the same CPU shares as the framework's task.

The confs: `examples/digits-mlp/job.conf` as it is (4,810 parameters), and
SINGA's MNIST MLP (`examples/singa/mnist-mlp/job.conf`, 10 M parameters)
with `train_steps` shortened at quick size; its data (`scylla-singa data
mnist-shaped`: the digits in MNIST's shape) sits in the workspace for both
images, since singa-py's image carries only the digits. Its runs get 1,024 MB
of memory on both images and both ways (`run --mem 1024`, `docker run
--memory 1024m`): `plan` gives it 416 MB, in which real SINGA trains but
singa-py is OOM-killed (measured: the peak memory column).

Measured per run: the test accuracy at every test the runtime ran (the
curve); steps/s from the second training display to the last by the
runtime's own clock (each display's samples/s: glog's timestamps for
Apache SINGA, singa-py's own; the conf's tests in between count, on both
alike); the container's CPU-seconds
(its cgroup's `cpuacct.usage`, read every 0.05 s while it runs: start-up and
tests included, up to 0.05 s of its last CPU missed) per training step; the
time from launch (`run` or `docker run` started) to the first progress
report reaching us (Apache SINGA's is its test at step 0; singa-py does not
test at step 0, its first is its first training display), and the total
wall time. Ratios are singa-py / real SINGA and framework / by hand, from the
same run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scylla_singa.contracts import JOB_LABEL, PROGRESS_PREFIX
from scylla_singa.singa_task.glog import LogReader, SingaMetrics
from scylla_singa.singa_task.jobshape import JobShape, read_shape
from .report import Headline, Plot, Section, Series, Table
from .stats import fmt_num, fmt_ratio, ratio, summarize

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "scylla_singa"]
SIZES = {"quick": {"mnist_steps": 121, "repeats": 1}, "full": {"mnist_steps": 1000, "repeats": 3}}
RUN_TIMEOUT_S = 1800
POLL_S = 0.05
WAYS = ("framework", "by hand")


@dataclass(frozen=True)
class Runtime:
    """An image and how to run it by hand (the program its README documents)."""

    key: str
    image: str
    runtime: str          # `run --runtime`
    program: list[str]    # by hand: the command before `-conf FILE`


RUNTIMES = (
    Runtime("singa", "singa:latest", "apache-singa", ["singa-local"]),
    Runtime("singa-py", "singa-py:latest", "singa-py", ["singa"]),
)


@dataclass(frozen=True)
class Conf:
    """A conf of the comparison; `data` names a `scylla-singa data` set the workspace must carry."""

    key: str
    title: str
    path: str              # under the repository
    data: str = ""         # a `scylla-singa data` command, written to /workspace/<data>
    data_dir: str = ""     # the directory the conf's paths name, replaced by /workspace/<data>
    shorten: bool = False  # train_steps becomes the size's mnist_steps
    mem_mb: int = 0        # `run --mem` (and `docker run --memory`) when the planned memory is not enough


CONFS = (
    Conf("digits-mlp", "digits MLP (4,810 parameters)", "examples/digits-mlp/job.conf"),
    Conf("mnist-mlp", "SINGA's MNIST MLP (10 M parameters)", "examples/singa/mnist-mlp/job.conf",
         data="mnist-shaped", data_dir="/data/mnist-shaped", shorten=True, mem_mb=1024),
)


# ---- the conf (pure) ---------------------------------------------------------------

def set_top_level(text: str, key: str, value: int) -> str:
    """The conf with its top-level `key: N` set to `value` (SINGA's confs write `key:N` or `key: N`)."""
    new, n = re.subn(rf"^{key}\s*:\s*\d+\s*$", f"{key}: {value}", text, count=1, flags=re.M)
    if n != 1:
        raise ValueError(f"the conf has no top-level `{key}:` line to change")
    return new


def top_level_int(text: str, key: str) -> int:
    m = re.search(rf"^{key}\s*:\s*(\d+)\s*$", text, flags=re.M)
    if m is None:
        raise ValueError(f"the conf has no top-level `{key}:` line")
    return int(m.group(1))


def prepare_conf(conf: Conf, text: str, mnist_steps: int) -> str:
    """The conf as both images run it: data paths moved into the workspace, steps shortened if the size says so."""
    if conf.data_dir:
        if conf.data_dir not in text:
            raise ValueError(f"{conf.path} names no {conf.data_dir}")
        text = text.replace(conf.data_dir, f"/workspace/{conf.data}")
    if conf.shorten:
        text = set_top_level(text, "train_steps", mnist_steps)
    return text


# ---- what a run reported (pure) ----------------------------------------------------------

@dataclass(frozen=True)
class Report:
    """One display of SINGA's: `t` when it reached us (seconds since the epoch); `samples_per_s` by the
    runtime's own clock since its previous training display (None for tests and a first display)."""

    t: float
    phase: str
    step: int
    accuracy: float | None
    samples_per_s: float | None = None


def progress_reports(lines: Iterable[tuple[float, str]]) -> list[Report]:
    """The contract's `PROGRESS {...}` lines (singa-py's stdout), timed by arrival."""
    out = []
    for t, line in lines:
        if line.startswith(PROGRESS_PREFIX + " "):
            p = json.loads(line[len(PROGRESS_PREFIX) + 1:])
            out.append(Report(t, p.get("phase", "train"), int(p["step"]), p.get("accuracy"),
                              p.get("samples_per_s")))
    return out


def glog_reports(lines: Iterable[tuple[float, str]], batchsize: int) -> list[Report]:
    """Apache SINGA's glog displays (`Train @ step N ...`, `Test @ step N` + its metrics line), timed by
    arrival; samples/s from glog's own timestamps, as singa-task computes them (a repeated display of the
    same training step is one display)."""
    reader = LogReader()
    out: list[Report] = []
    prev: SingaMetrics | None = None
    for t, line in lines:
        for event in reader.feed(line):
            if not isinstance(event, SingaMetrics):
                continue
            rate = None
            if event.phase == "train":
                if prev is not None and prev.step == event.step:
                    continue
                if prev is not None and event.step > prev.step and event.t > prev.t:
                    rate = (event.step - prev.step) * batchsize / (event.t - prev.t)
                prev = event
            out.append(Report(t, event.phase, event.step, event.values.get("accuracy"), rate))
    return out


def store_reports(rows: Iterable[dict[str, Any]]) -> list[Report]:
    """The framework store's progress rows (`at`: when the report reached the framework)."""
    return [Report(r["at"], r["phase"] or "train", int(r["step"]), r["accuracy"], r.get("samples_per_s"))
            for r in rows if r.get("step") is not None]


def why_run_failed(stdout: str, stderr: str) -> str:
    """The line of `run`'s output that says why the job failed (`<job>: FAILED: ...`), else its last lines."""
    for line in (stdout + "\n" + stderr).splitlines():
        if re.match(r"^\S+: (FAILED|KILLED|LOST)\b", line):
            return line.strip()[:600]
    return " | ".join((stderr or stdout).strip().splitlines()[-3:])[:600]


def accuracy_curve(reports: list[Report]) -> list[tuple[int, float]]:
    """(step, test accuracy) for every test, in step order; a test's last report wins."""
    by_step = {r.step: r.accuracy for r in reports if r.phase == "test" and r.accuracy is not None}
    return sorted(by_step.items())


def steps_per_s(reports: list[Report], batchsize: int) -> float | None:
    """Training steps per second by the runtime's own clock: the steps from the first training display to the
    last over the time the runtime says they took (each display's steps x batch / its samples/s). The first
    display (start-up) is left out; tests between displays count, on both images alike."""
    train: dict[int, Report] = {}
    for r in reports:
        if r.phase == "train":
            train[r.step] = r
    ordered = [train[s] for s in sorted(train)]
    steps = seconds = 0.0
    for before, r in zip(ordered, ordered[1:]):
        if r.samples_per_s:
            steps += r.step - before.step
            seconds += (r.step - before.step) * batchsize / r.samples_per_s
    return steps / seconds if seconds > 0 else None


def arrival_steps_per_s(reports: list[Report]) -> float | None:
    """Training steps per second between the first and the last training display by their arrival times."""
    train = sorted((r for r in reports if r.phase == "train"), key=lambda r: r.t)
    if len(train) < 2 or train[-1].t <= train[0].t or train[-1].step <= train[0].step:
        return None
    return (train[-1].step - train[0].step) / (train[-1].t - train[0].t)


def measure(reports: list[Report], launched: float, ended: float, cpu_s: float | None,
            train_steps: int, batchsize: int) -> dict[str, Any]:
    """A run's numbers from its reports, its launch and end times and its containers' CPU-seconds."""
    first = min((r.t for r in reports), default=None)
    return {"first_report_s": None if first is None else first - launched, "wall_s": ended - launched,
            "steps_per_s": steps_per_s(reports, batchsize), "arrival_steps_per_s": arrival_steps_per_s(reports),
            "cpu_s": cpu_s, "cpu_s_per_step": None if cpu_s is None or not train_steps else cpu_s / train_steps,
            "curve": accuracy_curve(reports), "reports": len(reports)}


# ---- ratios and summaries (pure) ----------------------------------------------------------

def median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return summarize(values).median if values else None


def pick(runs: list[dict[str, Any]], conf: str, runtime: str, way: str) -> list[dict[str, Any]]:
    return [r for r in runs if r["conf"] == conf and r["runtime"] == runtime and r["way"] == way
            and not r.get("error")]


def ratios(runs: list[dict[str, Any]], conf: str) -> dict[str, float | None]:
    """singa-py / real SINGA (steps/s, CPU-s per step; framework runs) and framework / by hand (each image)."""
    def m(runtime: str, way: str, key: str) -> float | None:
        return median_of(pick(runs, conf, runtime, way), key)

    out: dict[str, float | None] = {
        "py_over_singa_steps_per_s": ratio(m("singa-py", "framework", "steps_per_s"),
                                           m("singa", "framework", "steps_per_s")),
        "py_over_singa_steps_per_s_by_hand": ratio(m("singa-py", "by hand", "steps_per_s"),
                                                   m("singa", "by hand", "steps_per_s")),
        "py_over_singa_cpu_per_step": ratio(m("singa-py", "framework", "cpu_s_per_step"),
                                            m("singa", "framework", "cpu_s_per_step")),
    }
    for rt in RUNTIMES:
        for key in ("first_report_s", "wall_s"):
            out[f"{rt.key}_framework_over_by_hand_{key}"] = ratio(m(rt.key, "framework", key),
                                                                  m(rt.key, "by hand", key))
            fw, hand = m(rt.key, "framework", key), m(rt.key, "by hand", key)
            out[f"{rt.key}_framework_minus_by_hand_{key}"] = None if fw is None or hand is None else fw - hand
    return out


# ---- the two ways of running (pure) ---------------------------------------------------------

def framework_args(rt: Runtime, conf_path: Path, ws: Path, mem_mb: int) -> list[str]:
    """`scylla-singa run` as a user types it: no --master (an embedded one), no restart to hide a failure."""
    return (["run", "--json", "--image", rt.image, "--runtime", rt.runtime, "--max-restarts", "0",
             "--workspace", str(ws)] + (["--mem", str(mem_mb)] if mem_mb else []) + [str(conf_path)])


def by_hand_command(rt: Runtime, name: str, conf_path: Path, ws: Path, cpu_shares: int, mem_mb: int) -> list[str]:
    """`docker run` of the image's own program as its README documents it, with the framework task's CPU
    shares (and memory, when the conf sets one) so the two compete for the cores alike."""
    return ["docker", "run", "--rm", "--name", name, "--label", "scylla-bench=singa_side_by_side",
            "--cpu-shares", str(cpu_shares), *(["--memory", f"{mem_mb}m"] if mem_mb else []),
            "-e", "GLOG_logtostderr=1", "-e", "PYTHONUNBUFFERED=1",
            "-v", f"{conf_path}:/conf/job.conf:ro", "-v", f"{ws}:/workspace", rt.image,
            *rt.program, "-conf", "/conf/job.conf"]


# ---- CPU of containers (I/O) ---------------------------------------------------------------

def cgroup_cpu_file(container_id: str) -> Path | None:
    """The file with a container's CPU time in ns (cgroup v1 cpuacct), or usec (v2 cpu.stat), if present."""
    for path in (Path(f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage"),
                 Path(f"/sys/fs/cgroup/cpu,cpuacct/docker/{container_id}/cpuacct.usage"),
                 Path(f"/sys/fs/cgroup/docker/{container_id}/cpu.stat"),
                 Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat")):
        if path.exists():
            return path
    return None


def cgroup_memory_peak_file(container_id: str) -> Path | None:
    """The file with a container's peak memory in bytes (cgroup v1 max_usage_in_bytes, v2 memory.peak)."""
    for path in (Path(f"/sys/fs/cgroup/memory/docker/{container_id}/memory.max_usage_in_bytes"),
                 Path(f"/sys/fs/cgroup/docker/{container_id}/memory.peak"),
                 Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/memory.peak")):
        if path.exists():
            return path
    return None


def cpu_seconds(text: str, name: str) -> float:
    """Seconds of CPU from `cpuacct.usage` (ns) or `cpu.stat` (`usage_usec N`)."""
    if name == "cpu.stat":
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        raise ValueError("cpu.stat has no usage_usec")
    return int(text.strip()) / 1e9


class ContainerCpu:
    """CPU-seconds (and peak memory) of the containers started while it watches that `wanted(attributes)` picks.

    Docker's start events name the containers (attributes: name and labels);
    their cgroup files are read every POLL_S until the container is gone.
    """

    def __init__(self, wanted: Callable[[dict[str, str]], bool]) -> None:
        import docker
        self.client = docker.from_env(timeout=30)
        self.wanted = wanted
        self.ids: set[str] = set()
        self.last: dict[str, float] = {}
        self.peak_bytes: dict[str, int] = {}
        self.seen_file: set[str] = set()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.events = self.client.events(decode=True, since=int(time.time()) - 1,
                                         filters={"type": "container", "event": "start"})
        self.threads = [threading.Thread(target=self._follow, daemon=True),
                        threading.Thread(target=self._poll, daemon=True)]
        for th in self.threads:
            th.start()

    def _follow(self) -> None:
        try:
            for ev in self.events:
                attrs = (ev.get("Actor") or {}).get("Attributes") or {}
                if self.wanted(attrs):
                    with self.lock:
                        self.ids.add(ev.get("id") or ev["Actor"]["ID"])
        except Exception:  # noqa: BLE001 - closing the stream ends the loop with an error
            pass

    def _poll(self) -> None:
        while not self.stopping.is_set():
            self.sample()
            self.stopping.wait(POLL_S)

    def sample(self) -> None:
        with self.lock:
            ids = list(self.ids)
        for cid in ids:
            path = cgroup_cpu_file(cid)
            if path is None:
                continue
            try:
                value = cpu_seconds(path.read_text(), path.name)
            except (OSError, ValueError):
                continue
            with self.lock:
                self.seen_file.add(cid)
                self.last[cid] = max(value, self.last.get(cid, 0.0))
            mem = cgroup_memory_peak_file(cid)
            try:
                peak = int(mem.read_text().strip()) if mem is not None else 0
            except (OSError, ValueError):
                peak = 0
            with self.lock:
                self.peak_bytes[cid] = max(peak, self.peak_bytes.get(cid, 0))

    def stop(self) -> float | None:
        """Total CPU-seconds of the wanted containers; None when none was seen in a cgroup file."""
        self.stopping.set()
        self.events.close()
        for th in self.threads:
            th.join(5)
        self.client.close()
        with self.lock:
            return sum(self.last.values()) if self.seen_file else None

    def peak_mb(self) -> float | None:
        """The largest peak memory of one wanted container, in MB; None when none was read."""
        with self.lock:
            return max(self.peak_bytes.values()) / 2**20 if any(self.peak_bytes.values()) else None


# ---- one run (I/O) ---------------------------------------------------------------------

def job_ids_in(store: Path) -> set[str]:
    if not store.exists():
        return set()
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
    try:
        return {row[0] for row in db.execute("SELECT job_id FROM jobs")}
    except sqlite3.Error:
        return set()
    finally:
        db.close()


def fresh_workspace(home: Path, conf: Conf, data: Path | None, name: str) -> Path:
    """A workspace writable by the images' uid 1000, carrying the conf's data when it needs some."""
    ws = home / "jobs" / name
    ws.mkdir(parents=True)
    ws.chmod(0o1777)
    if data is not None:
        shutil.copytree(data, ws / conf.data)
    return ws


def timed_lines(proc: subprocess.Popen) -> list[tuple[float, str]]:
    """Every line of the process's output with when it arrived."""
    assert proc.stdout is not None
    return [(time.time(), line.rstrip("\n")) for line in proc.stdout]


def run_framework(rt: Runtime, conf_path: Path, ws: Path, home: Path, shape: JobShape, mem_mb: int) -> dict[str, Any]:
    """`scylla-singa run --json` of the conf; its progress read back from the framework's store."""
    env = {**os.environ, "SCYLLA_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    store = home / "framework.sqlite"
    known = job_ids_in(store)
    cpu = ContainerCpu(lambda a: a.get(JOB_LABEL, "") not in known and a.get(JOB_LABEL, "") in job_ids_in(store))
    args = framework_args(rt, conf_path, ws, mem_mb)
    launched = time.time()
    try:
        r = subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=REPO, timeout=RUN_TIMEOUT_S)
    finally:
        ended = time.time()
        cpu_s = cpu.stop()
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    out = json.loads(lines[-1]) if lines else {}
    if r.returncode != 0 or out.get("state") != "FINISHED":
        raise RuntimeError(f"scylla-singa run on {rt.image} exited {r.returncode} ({out.get('state')}): "
                           f"{why_run_failed(r.stdout, r.stderr)}")
    from scylla_singa.framework.store import JobStore
    reports = store_reports(JobStore(store).progress(out["job"], limit=100000))
    return {**measure(reports, launched, ended, cpu_s, shape.train_steps, shape.train_batchsize or 0), "job": out["job"],
            "final_accuracy": out.get("test_accuracy"), "mem_peak_mb": cpu.peak_mb()}


def run_by_hand(rt: Runtime, conf_path: Path, ws: Path, cpu_shares: int, shape: JobShape,
                mem_mb: int) -> dict[str, Any]:
    """`docker run --rm` of the image's own program on the conf, its output read as it comes."""
    name = f"scylla-bench-sbs-{uuid.uuid4().hex[:10]}"
    own = ws / Path(shape.workspace or "/workspace").relative_to("/workspace")
    own.mkdir(parents=True, exist_ok=True)
    own.chmod(0o777)   # SINGA wants cluster.workspace to exist, writable by the image's uid 1000
    cpu = ContainerCpu(lambda a: a.get("name") == name)
    cmd = by_hand_command(rt, name, conf_path, ws, cpu_shares, mem_mb)
    launched = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    timer = threading.Timer(RUN_TIMEOUT_S, lambda: subprocess.run(["docker", "rm", "-f", name],
                                                                  capture_output=True))
    timer.start()
    try:
        lines = timed_lines(proc)
        code = proc.wait()
    finally:
        ended = time.time()
        timer.cancel()
        cpu_s = cpu.stop()
    if code != 0:
        raise RuntimeError(f"docker run of {rt.image} exited {code}: {' | '.join(l for _, l in lines[-8:])}")
    batch = shape.train_batchsize or 0
    reports = progress_reports(lines) + glog_reports(lines, batch)
    curve = accuracy_curve(reports)
    return {**measure(reports, launched, ended, cpu_s, shape.train_steps, batch), "container": name,
            "final_accuracy": curve[-1][1] if curve else None, "mem_peak_mb": cpu.peak_mb()}


def planned_proc0(conf_path: Path, env: dict[str, str]) -> dict[str, Any]:
    r = subprocess.run(CLI + ["plan", "--json", str(conf_path)], capture_output=True, text=True, env=env, cwd=REPO,
                       timeout=120, check=True)
    return json.loads(r.stdout)["procs"][0]


def planned_cpu_shares(conf_path: Path, env: dict[str, str]) -> int:
    """The CPU shares the framework's agent gives process 0 (1024 per planned CPU), for the by-hand run."""
    return max(2, int(round(1024 * planned_proc0(conf_path, env)["cpus"])))


def planned_mem_mb(conf_path: Path, env: dict[str, str]) -> int:
    """The memory `plan` gives process 0 (the container's limit unless `--mem` says otherwise)."""
    return int(planned_proc0(conf_path, env)["mem_mb"])


def image_ids() -> dict[str, str]:
    out = {}
    for rt in RUNTIMES:
        r = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", rt.image], capture_output=True,
                           text=True, timeout=60)
        out[rt.image] = r.stdout.strip()[:19] if r.returncode == 0 else f"missing: {r.stderr.strip()[:200]}"
    return out


def run(size: str) -> dict[str, Any]:
    cfg = SIZES[size]
    home = Path(tempfile.mkdtemp(prefix="scylla-bench-sbs-"))
    home.chmod(0o755)
    env = {**os.environ, "SCYLLA_HOME": str(home)}
    runs: list[dict[str, Any]] = []
    confs: dict[str, dict[str, Any]] = {}
    try:
        data_dirs: dict[str, Path] = {}
        for conf in CONFS:
            text = prepare_conf(conf, (REPO / conf.path).read_text(), cfg["mnist_steps"])
            conf_path = home / f"{conf.key}.conf"
            conf_path.write_text(text)
            conf_path.chmod(0o644)
            if conf.data and conf.data not in data_dirs:
                out = home / "data" / conf.data
                subprocess.run(CLI + ["data", conf.data, "--out", str(out)], check=True, capture_output=True,
                               env=env, cwd=REPO, timeout=600)
                data_dirs[conf.data] = out
            shape = read_shape(text)
            shares = planned_cpu_shares(conf_path, env)
            confs[conf.key] = {"title": conf.title, "path": conf.path, "train_steps": shape.train_steps,
                               "batchsize": shape.train_batchsize, "test_freq": top_level_int(text, "test_freq"),
                               "cpu_shares": shares, "mem_mb": conf.mem_mb,
                               "planned_mem_mb": planned_mem_mb(conf_path, env)}
            for repeat in range(cfg["repeats"]):
                for rt in RUNTIMES:
                    for way in WAYS:  # by hand right after the framework: load drift hits both alike
                        ws = fresh_workspace(home, conf, data_dirs.get(conf.data),
                                             f"{conf.key}-{rt.key}-{way.replace(' ', '-')}-{repeat}")
                        label = f"  {conf.key} on {rt.image}, {way} (repeat {repeat + 1})"
                        print(label + " ...", flush=True)
                        row: dict[str, Any] = {"conf": conf.key, "runtime": rt.key, "image": rt.image, "way": way,
                                               "repeat": repeat}
                        try:
                            if way == "framework":
                                row.update(run_framework(rt, conf_path, ws, home, shape, conf.mem_mb))
                            else:
                                row.update(run_by_hand(rt, conf_path, ws, shares, shape, conf.mem_mb))
                        except Exception as exc:  # noqa: BLE001 - recorded; the other runs still go
                            row["error"] = f"{exc.__class__.__name__}: {exc}"[:1500]
                        runs.append(row)
                        print(label + ": " + (row["error"] if "error" in row else
                                              f"first report {fmt_num(row['first_report_s'])} s, wall "
                                              f"{fmt_num(row['wall_s'])} s, {fmt_num(row['steps_per_s'])} steps/s, "
                                              f"CPU {fmt_num(row['cpu_s'])} s, accuracy {row['final_accuracy']}"),
                              flush=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    failed = [r for r in runs if r.get("error")]
    if len(failed) == len(runs):
        raise RuntimeError(f"every run failed; the first: {failed[0]['error']}")
    return {"confs": confs, "runs": runs, "images": image_ids(), "repeats": cfg["repeats"],
            "poll_s": POLL_S, "runtimes": [asdict(rt) for rt in RUNTIMES]}


# ---- the report section (pure) ---------------------------------------------------------------

def _s(x: float | None) -> str:
    return "-" if x is None else f"{fmt_num(x)} s"


def _curve_text(curve: list) -> str:
    return ", ".join(f"{int(s)}: {a:.3f}" for s, a in curve) if curve else "-"


def section(data: dict[str, Any]) -> Section:
    runs = data["runs"]
    tables, plots, notes, headline = [], [], [], []
    rows = []
    for key, conf in data["confs"].items():
        for rt in RUNTIMES:
            for way in WAYS:
                chosen = pick(runs, key, rt.key, way)
                failed = [r for r in runs if r["conf"] == key and r["runtime"] == rt.key and r["way"] == way
                          and r.get("error")]
                if not chosen:
                    rows.append([conf["title"], rt.image, way, "failed: " + (failed[0]["error"][:400] if failed
                                                                            else "not run")])
                    continue
                cps = median_of(chosen, "cpu_s_per_step")
                last = chosen[-1]["curve"][-1] if chosen[-1]["curve"] else None
                mem = median_of(chosen, "mem_peak_mb")
                rows.append([conf["title"], rt.image, way, _s(median_of(chosen, "first_report_s")),
                             _s(median_of(chosen, "wall_s")), fmt_num(median_of(chosen, "steps_per_s")),
                             _s(median_of(chosen, "cpu_s")), "-" if cps is None else f"{fmt_num(cps * 1e3)} ms",
                             "-" if mem is None else f"{mem:,.0f} MB",
                             "-" if last is None else f"{last[1]:.3f} (step {int(last[0])})"])
    n = data.get("repeats", 1)
    tables.append(Table(["Conf", "Image", "Run", "Launch to first report", "Wall time", "Steps/s",
                         "Container CPU", "CPU per step", "Peak memory", "Last test accuracy (step)"], rows,
                        caption=f"**Per image and way of running** ({'one run each' if n == 1 else f'median of {n}'}"
                                "; the digits MLP trains its 600 steps, the MNIST MLP "
                                f"{data['confs'].get('mnist-mlp', {}).get('train_steps', '?')}):"))
    ratio_rows = []
    for key, conf in data["confs"].items():
        r = ratios(runs, key)
        ratio_rows.append([conf["title"], fmt_ratio(r["py_over_singa_steps_per_s"]),
                           fmt_ratio(r["py_over_singa_steps_per_s_by_hand"]),
                           fmt_ratio(r["py_over_singa_cpu_per_step"])]
                          + [f"{fmt_ratio(r[f'{rt.key}_framework_over_by_hand_{k}'])} "
                             f"({_signed(r[f'{rt.key}_framework_minus_by_hand_{k}'])})"
                             for rt in RUNTIMES for k in ("first_report_s", "wall_s")])
        headline.append(Headline(
            f"7. singa-py vs Apache SINGA, {conf['title']}",
            f"{fmt_ratio(r['py_over_singa_steps_per_s'])} steps/s, {fmt_ratio(r['py_over_singa_cpu_per_step'])} "
            "CPU per step (singa-py / SINGA)", "Apache SINGA 0.3.0 (singa:latest), same conf, same run",
            fmt_ratio(r["py_over_singa_steps_per_s"]), "-", "reported (one noisy quick run)" if n == 1 else "reported"))
        headline.append(Headline(
            f"7b. Framework over SINGA by hand, {conf['title']}",
            f"wall {fmt_ratio(r['singa_framework_over_by_hand_wall_s'])} "
            f"({_signed(r['singa_framework_minus_by_hand_wall_s'])}), first report "
            f"{_signed(r['singa_framework_minus_by_hand_first_report_s'])}",
            "`docker run` of singa:latest, same conf, same run",
            fmt_ratio(r["singa_framework_over_by_hand_wall_s"]), "-", "reported"))
    tables.append(Table(["Conf", "Steps/s singa-py / SINGA (framework)", "Steps/s singa-py / SINGA (by hand)",
                         "CPU per step singa-py / SINGA (framework)"]
                        + [f"{rt.image}: {what} framework / by hand (difference)" for rt in RUNTIMES
                           for what in ("launch to first report", "wall")], ratio_rows,
                        caption="**Ratios, all from the same run:**"))
    curve_rows = []
    for key, conf in data["confs"].items():
        series = []
        for rt in RUNTIMES:
            for way in WAYS:
                chosen = pick(runs, key, rt.key, way)
                if not chosen:
                    continue
                curve = chosen[-1]["curve"]
                curve_rows.append([conf["title"], rt.image, way, _curve_text(curve)])
                series.append(Series(f"{rt.image}, {way}", [s for s, _ in curve], [a for _, a in curve]))
        plots.append(Plot(f"bench-singa-side-by-side-{key}.png", f"Test accuracy, {conf['title']}", "step",
                          "test accuracy", series))
    tables.append(Table(["Conf", "Image", "Run", "Test accuracy at each test (step: accuracy)"], curve_rows,
                        caption="**The curves** (Apache SINGA tests at step 0 and every `test_freq` steps, not "
                                "after the last step; singa-py tests every `test_freq` steps from `test_freq` on, "
                                "and after the last step when it falls on one; the last run of each):"))
    notes += [
        "Noisy: the quick size is ONE run of each, on 2 cores shared with a CI run of the whole test suite and "
        "other engineers' work (the load average is below); differences of a few tens of percent in steps/s or "
        "CPU, and of a second or two in the times, are within that noise. `make bench ONLY=singa_side_by_side "
        "SIZE=full` runs the full MNIST MLP (1,000 steps) three times and reports medians.",
        "Launch to first report counts, for the framework, the embedded master and agent starting, subscribing, "
        "planning, the job's overlay, delivery and the agent's container start; by hand, only `docker run`. "
        "Both end at the runtime's first display, so its own start (reading the data, initialising parameters) "
        "is in both: Apache SINGA's test at step 0, singa-py's first training display (after `disp_freq` steps: "
        "10 on the MNIST MLP, which is why singa-py's first report comes late there). The framework's "
        "difference is the number to read; it is seconds, whatever the model.",
        "Steps/s counts the tests that fall between the first and last training display (the same tests on both "
        "images); CPU per step divides the container's whole CPU time (start-up and tests included) by the "
        "conf's train_steps. The framework's own processes (`run`, the embedded master and agent) are not in "
        "the container CPU. Peak memory is the cgroup's maximum, read with the CPU: a container that lives "
        "only a few seconds can be gone before it is read at its peak (the digits MLP's few MB).",
        f"Images: {', '.join(f'{k} {v}' for k, v in data.get('images', {}).items())}.",
        "singa-py's image takes numpy from Debian's python3-numpy, which is linked to the reference BLAS "
        "(`numpy.show_config()` in singa-py:latest lists `blas` and no OpenBLAS), while Apache SINGA links "
        "OpenBLAS: on the 10 M-parameter MLP singa-py's speed here is that of reference matrix products. A numpy "
        "with OpenBLAS (such as the wheel in the venv) would narrow the gap; that is not measured here.",
    ]
    for key, conf in data["confs"].items():
        if conf.get("mem_mb"):
            peaks = {rt.image: median_of([r for r in runs if r["conf"] == key and r["runtime"] == rt.key
                                          and not r.get("error")], "mem_peak_mb") for rt in RUNTIMES}
            notes.append(f"The {conf['title']} ran with {conf['mem_mb']:,} MB on both images and both ways "
                         f"(`run --mem`, `docker run --memory`): `plan` gives it {conf.get('planned_mem_mb', '?')} "
                         "MB, in which real SINGA trains but singa-py's task was OOM-killed in a first run "
                         "(TASK_FAILED, REASON_CONTAINER_LIMITATION_MEMORY). Peak memory here: "
                         + ", ".join(f"{img} {'-' if v is None else f'{v:,.0f} MB'}" for img, v in peaks.items())
                         + ".")
    intro = __doc__.split("\n\n", 1)[1].strip()
    return Section("singa_side_by_side", "7. Apache SINGA side by side with the Python runtime", intro, tables, plots,
                   notes, headline)


def _signed(x: float | None) -> str:
    return "-" if x is None else f"{'+' if x >= 0 else ''}{fmt_num(x)} s"
