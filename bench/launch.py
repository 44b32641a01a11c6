"""4. Job launch latency: the framework vs starting the same containers with the Docker SDK.

Framework: the pieces `scylla-singa run` wires up, in this process: an
EmbeddedMesos master with one Docker agent on the local engine (resources
`cpus:64;mem:65536`, so 16 processes fit), and a FrameworkShell (pymesos
driver, the framework core, volume delivery, the swarm manager for job
overlays) already subscribed, as it is once `run` has started. The clock
runs from `submit` of a job.conf whose cluster section gives N processes
(command `sleep 600`, 0.1 CPU and 64 MB each) until the framework's job
record says RUNNING, i.e. it has seen TASK_RUNNING for every process: the
overlay is created, job.conf and cluster.json delivered, the gang placed on
the offers, ACCEPTed, and N containers started by the agent on the overlay.

Floor: the same N containers launched directly with the Docker SDK, the
way a hand-written script would do it at best: create the job overlay
(scylla_singa.swarm.overlays.create_job_network), then create and start the N
containers of `singa-py:latest` concurrently (one thread each) on it, with
the same network alias, labels, bind mounts (sandbox, job.conf,
cluster.json, workspace), environment, CPU shares and memory limit, until
each one inspects as running.

Every container and network made here is labelled `scylla.job=<id>` and
removed; jobs are killed between runs (the framework's own kill path).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker
import docker.errors

from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL
from scylla_singa.delivery.volume import VolumeDelivery
from scylla_singa.framework.core import CoreConfig, FrameworkCore
from scylla_singa.framework.model import JobSpec, JobState
from scylla_singa.framework.progress_book import ProgressBook
from scylla_singa.framework.shell import FrameworkShell
from scylla_singa.framework.store import JobStore
from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from scylla_singa.swarm.overlays import create_job_network, ensure_swarm, remove_containers, remove_job_network
from .report import Headline, Plot, Section, Series, Table
from .stats import fmt_ratio, fmt_spread, fmt_time, ratio, summarize, verdict

REPO = Path(__file__).resolve().parent.parent
IMAGE = "singa-py:latest"
GOAL = 1.25
CPUS, MEM_MB = 0.1, 64
AGENT_RESOURCES = "cpus:64;mem:65536"
COMMAND = "sleep 600"
SANDBOX = "/mnt/mesos/sandbox"
SIZES = {"quick": {"n": [1, 4, 8, 16], "repeats": 3}, "full": {"n": [1, 4, 8, 16], "repeats": 7}}


def job_conf(nprocs: int) -> str:
    """The digits MLP with a cluster section of `nprocs` processes (one group, nprocs workers and servers)."""
    text = (REPO / "examples" / "digits-mlp" / "job.conf").read_text()
    cluster = (f"cluster {{\n  nworker_groups: 1\n  nserver_groups: 1\n  nworkers_per_group: {nprocs}\n"
               f"  nservers_per_group: {nprocs}\n  workspace: \"/workspace/bench\"\n}}\n")
    text, n = re.subn(r"^cluster \{.*?^\}\n?", cluster, text, flags=re.S | re.M)
    if n != 1:
        raise ValueError("the example job.conf has no cluster section to replace")
    return text.replace('name: "digits-mlp"', f'name: "bench-launch-{nprocs}"')


class FrameworkHarness:
    """EmbeddedMesos (one Docker agent) + a subscribed FrameworkShell; `launch(n)` times one job."""

    def __init__(self, client: docker.DockerClient, work: Path) -> None:
        self.client, self.work = client, work
        self.mesos = EmbeddedMesos([AgentSpec(resources=AGENT_RESOURCES, hostname="bench-agent")],
                                   docker_client=client, work_dir=work / "mesos", allowed_host_paths=[work])
        self.store = JobStore(work / "framework.sqlite")
        core = FrameworkCore(CoreConfig(kill_grace_s=0.5))
        self.shell = FrameworkShell(core, self.store, VolumeDelivery(work / "jobs", (work,)), client,
                                    ProgressBook(), tick_s=0.1)
        self.job_ids: list[str] = []

    def start(self) -> None:
        self.mesos.start()
        self.shell.start(self.mesos.master_address, user="root", credential=self.mesos.framework_credential)
        if not self.shell.subscribed.wait(30):
            raise RuntimeError(f"the framework did not subscribe: {self.shell.fatal}")

    def launch(self, nprocs: int, timeout: float = 180.0) -> dict[str, Any]:
        job_id = f"bench-fw-{nprocs}-{uuid.uuid4().hex[:6]}"
        self.job_ids.append(job_id)
        conf = self.work / f"{job_id}.conf"
        conf.write_text(job_conf(nprocs))
        spec = JobSpec(job_id, str(conf), conf.read_text(), IMAGE, "spread", "volume", command=COMMAND,
                       max_restarts=0, cpus=CPUS, mem_mb=MEM_MB)
        t0 = time.perf_counter()
        self.shell.submit(spec)
        deadline = t0 + timeout
        while True:
            job = self.shell.job(job_id)
            state = job.state if job else None
            if state is JobState.RUNNING:
                elapsed = time.perf_counter() - t0
                break
            if (state is not None and state.terminal) or time.perf_counter() > deadline:
                raise RuntimeError(f"job {job_id} did not reach RUNNING (state {state}; "
                                   f"{job.failure if job else ''} {job.waiting_reason if job else ''})")
            time.sleep(0.005)
        with self.shell.lock:
            history = list(job.history)
        self.kill(job_id)
        return {"seconds": elapsed, "phases": _phases(history)}

    def kill(self, job_id: str) -> None:
        self.shell.kill(job_id)
        if not self.shell.ended[job_id].wait(120):
            raise RuntimeError(f"job {job_id} did not end within 120 s of its kill")

    def stop(self) -> None:
        try:
            self.shell.stop(teardown=True)
        finally:
            self.mesos.stop()


def _phases(history: list[tuple[float, str, str]]) -> dict[str, float]:
    """Seconds from submission to each job state (the framework's own record)."""
    if not history:
        return {}
    t0 = history[0][0]
    return {state: round(t - t0, 4) for t, state, _ in history}


def floor_launch(client: docker.DockerClient, nprocs: int, work: Path) -> dict[str, Any]:
    """Overlay + N containers straight through the Docker SDK; seconds until all inspect as running."""
    job = f"bench-floor-{nprocs}-{uuid.uuid4().hex[:6]}"
    sandbox, files = work / job, work / f"{job}-files"
    for d in (sandbox, files, files / "workspace"):
        d.mkdir()
        d.chmod(0o1777)
    (files / "job.conf").write_text(job_conf(nprocs))
    (files / "cluster.json").write_text(json.dumps({"job": job, "nprocs": nprocs, "procs": [
        {"id": k, "host": f"{job}-proc-{k}", "port": 6723} for k in range(nprocs)]}))
    volumes = {str(sandbox): {"bind": SANDBOX, "mode": "rw"},
               str(files / "job.conf"): {"bind": f"{SANDBOX}/job.conf", "mode": "ro"},
               str(files / "cluster.json"): {"bind": f"{SANDBOX}/cluster.json", "mode": "ro"},
               str(files / "workspace"): {"bind": "/workspace", "mode": "rw"}}
    labels = {JOB_LABEL: job, MANAGED_LABEL: "true"}
    made: list = []
    try:
        t0 = time.perf_counter()
        net = create_job_network(client, job)

        def start(k: int):
            alias = f"{job}-proc-{k}"
            c = client.containers.create(
                IMAGE, ["/bin/sh", "-c", COMMAND], name=alias, hostname=alias, labels=labels,
                network=net.name, volumes=volumes, working_dir=SANDBOX,
                environment={"SCYLLA_JOB_ID": job, "SCYLLA_PROC_ID": str(k), "MESOS_SANDBOX": SANDBOX},
                cpu_shares=int(1024 * CPUS), mem_limit=f"{MEM_MB}m", detach=True,
                networking_config={net.name: client.api.create_endpoint_config(aliases=[alias])})
            made.append(c)
            c.start()
            state = client.api.inspect_container(c.id)["State"]
            if not state.get("Running"):
                raise RuntimeError(f"container {alias} is {state.get('Status')} right after start")
            return c
        with ThreadPoolExecutor(max_workers=nprocs) as pool:
            list(pool.map(start, range(nprocs)))
        elapsed = time.perf_counter() - t0
        return {"seconds": elapsed}
    finally:
        remove_containers(made)
        remove_job_network(client, job, timeout_s=60)
        shutil.rmtree(sandbox, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)


def leftovers(client: docker.DockerClient, prefix: str = "bench-") -> tuple[list, list]:
    cs = [c for c in client.containers.list(ignore_removed=True, all=True, filters={"label": JOB_LABEL})
          if c.labels.get(JOB_LABEL, "").startswith(prefix)]
    ns = [n for n in client.networks.list(filters={"label": JOB_LABEL})
          if n.attrs.get("Labels", {}).get(JOB_LABEL, "").startswith(prefix)]
    return cs, ns


def cleanup(client: docker.DockerClient, job_ids: list[str]) -> None:
    """Remove whatever of ours is left (after a failure)."""
    for job in job_ids:
        for c in client.containers.list(ignore_removed=True, all=True, filters={"label": f"{JOB_LABEL}={job}"}):
            try:
                c.remove(force=True)
            except docker.errors.APIError:
                pass
        try:
            remove_job_network(client, job, timeout_s=30)
        except Exception:  # noqa: BLE001
            pass


def run(size: str) -> dict[str, Any]:
    return measure(docker.from_env(timeout=300), SIZES[size])


def measure(client: docker.DockerClient, cfg: dict[str, Any]) -> dict[str, Any]:
    """Framework and floor launches of every N in `cfg["n"]`, `cfg["repeats"]` times, alternating order.

    Separate from `run` so a test can drive the same path at a tiny size: the
    benchmark once broke unnoticed (the framework met the master's default
    credentials without its own) because nothing ran it between sweeps.
    """
    client.images.get(IMAGE)
    ensure_swarm(client)
    work = Path(tempfile.mkdtemp(prefix="scylla-bench-launch-"))
    work.chmod(0o755)
    harness = FrameworkHarness(client, work)
    samples: dict[int, dict[str, list]] = {n: {"framework": [], "floor": [], "phases": []} for n in cfg["n"]}
    try:
        harness.start()
        harness.launch(1)  # warm: first overlay, first container, imports
        floor_launch(client, 1, work)
        for rep in range(cfg["repeats"]):
            for n in cfg["n"]:
                order = ("framework", "floor") if rep % 2 == 0 else ("floor", "framework")
                for kind in order:
                    if kind == "framework":
                        r = harness.launch(n)
                        samples[n]["framework"].append(r["seconds"])
                        samples[n]["phases"].append(r["phases"])
                    else:
                        samples[n]["floor"].append(floor_launch(client, n, work)["seconds"])
                print(f"  rep {rep + 1}: N={n:>2} framework {samples[n]['framework'][-1]:.2f}s "
                      f"floor {samples[n]['floor'][-1]:.2f}s", flush=True)
    finally:
        try:
            harness.stop()
        finally:
            cleanup(client, harness.job_ids)
            shutil.rmtree(work, ignore_errors=True)
    cs, ns = leftovers(client)
    return {"goal_ratio": GOAL, "cpus": CPUS, "mem_mb": MEM_MB, "agent_resources": AGENT_RESOURCES,
            "points": [{"n": n, **samples[n]} for n in cfg["n"]],
            "left_behind": {"containers": len(cs), "networks": len(ns)}}


def section(data: dict[str, Any]) -> Section:
    goal = data["goal_ratio"]
    rows, fw_s, fl_s = [], [], []
    worst = None
    for p in data["points"]:
        fw, fl = summarize(p["framework"]), summarize(p["floor"])
        r = ratio(fw.median, fl.median)
        phases = _median_phases(p["phases"])
        rows.append([str(p["n"]), fmt_time(fw.median), fmt_spread(fw), fmt_time(fl.median), fmt_spread(fl),
                     "Docker SDK, same N containers on the same overlay (this machine)", fmt_ratio(r),
                     verdict(r, goal), phases])
        fw_s.append(fw)
        fl_s.append(fl)
        if worst is None or (r or 0) > (worst[1] or 0):
            worst = (p["n"], r, fw, fl)
    table = Table(["N processes", "Framework (median)", "p10 - p90", "Floor (median)", "p10 - p90", "Anchor",
                   "Ratio (ours / anchor)", "Goal <= 1.25x", "Framework phases (median, from submit)"], rows)
    ns = [p["n"] for p in data["points"]]
    plot = Plot("bench-launch.png", "Job launch: submit -> every process RUNNING on its overlay",
                "processes (containers)", "seconds (median, p10-p90 band)",
                [Series("scylla-singa (framework + embedded Mesos)", ns, [s.median for s in fw_s],
                        [s.p10 for s in fw_s], [s.p90 for s in fw_s]),
                 Series("floor: Docker SDK directly", ns, [s.median for s in fl_s], [s.p10 for s in fl_s],
                        [s.p90 for s in fl_s])])
    headline = []
    if worst:
        n, r, fw, fl = worst
        headline.append(Headline(f"4. Job launch, worst N ({n} processes)",
                                 f"{fmt_time(fw.median)} vs floor {fmt_time(fl.median)}",
                                 "Docker SDK launch of the same containers, same run",
                                 fmt_ratio(r), "<= 1.25x", verdict(r, goal)))
    left = data.get("left_behind", {})
    notes = [f"Left behind after the run: {left.get('containers', '?')} containers, "
             f"{left.get('networks', '?')} networks labelled `scylla.job=bench-*`.",
             "Phases are the framework's job record: PREPARING at submit, WAITING once the overlay exists and "
             "job.conf/cluster.json are delivered, LAUNCHING once the gang is placed and ACCEPTed, RUNNING when "
             "every TASK_RUNNING is in."]
    intro = __doc__.split("\n\n", 1)[1].strip()
    return Section("launch", "4. Job launch latency", intro, [table], [plot], notes, headline)


def _median_phases(phases: list[dict[str, float]]) -> str:
    keys = ["WAITING", "LAUNCHING", "RUNNING"]
    parts = []
    for k in keys:
        vals = [p[k] for p in phases if k in p]
        if vals:
            parts.append(f"{k} {fmt_time(summarize(vals).median)}")
    return ", ".join(parts) or "-"
