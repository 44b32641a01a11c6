"""5. Network: ZeroMQ between two containers on a job overlay vs host networking, and the runtime over it.

Anchors: host networking measured here, in the same run (the ceiling for an
overlay); and the published overlay overhead of Slim (Zhuo et al., NSDI
2019): across hosts, Docker's overlay had 48% less throughput and 85% more
latency than the host network (overlay/host: 0.52x throughput, 1.85x
latency), for comparison with our own overlay/host ratios.

- Messages: `bench/zmqbench.py` in two `singa-py:latest` containers (python3
  and pyzmq from Debian, as the runtime uses them): REQ/REP round trips of
  64 bytes, and PUSH/PULL bulk transfers of 64 B, 1 KiB and 64 KiB messages.
  Overlay: both containers on a fresh job overlay
  (`scylla_singa.swarm.overlays.create_job_network`), the client reaching the server
  by name. Host: both with `network_mode=host`. Same host: both on the local
  engine. Across hosts: a 2-node cluster-in-a-box (`scylla_singa.cluster`,
  network namespaces with their own dockerd, joined to the swarm) brought up
  and down inside the benchmark; the overlay then crosses a VXLAN link.
  Overlay and host runs alternate (2 rounds quick, 3 full) so drift in the
  machine's load falls on both.
- Runtime: a 4-process AllReduce job (4 workers, 4 servers) as 4 containers
  on an overlay, vs the same 4 processes in one container (loopback), vs the
  same job as one process (4 workers and 4 servers, no sockets); steps/s
  from the PROGRESS lines of worker 0 (Docker's log timestamps), per
  display window.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import docker
import docker.errors

from scylla_singa.cluster import subnets
from scylla_singa.contracts import JOB_LABEL, MANAGED_LABEL
from scylla_singa.swarm.overlays import create_job_network, ensure_swarm, remove_containers, remove_job_network
from .procs import free_port
from .report import Headline, Plot, Section, Series, Table
from .stats import fmt_num, fmt_ratio, fmt_spread, fmt_time, percentile, ratio, summarize

REPO = Path(__file__).resolve().parent.parent
IMAGE = "singa-py:latest"
SCRIPT = (Path(__file__).resolve().parent / "zmqbench.py").read_text()
SLIM = {"throughput": 0.52, "latency": 1.85}
SLIM_TEXT = "Slim (NSDI 2019), overlay vs host across hosts: -48% throughput, +85% latency"
SIZES = {
    "quick": {"plan": {"warmup": 300, "rtts": 2000, "repeats": 3,
                       "bulk": [[64, 200000], [1024, 100000], [65536, 5000]]},
              "rounds": 2, "runtime_steps": 1500, "runtime_runs": 1},
    "full": {"plan": {"warmup": 1000, "rtts": 10000, "repeats": 5,
                      "bulk": [[64, 1000000], [1024, 300000], [65536, 20000]]},
             "rounds": 3, "runtime_steps": 4000, "runtime_runs": 3},
}


def labels(job: str) -> dict[str, str]:
    return {JOB_LABEL: job, MANAGED_LABEL: "true"}


# ---- message benchmark -------------------------------------------------------

def zmq_pair(server_engine: docker.DockerClient, client_engine: docker.DockerClient, job: str, plan: dict,
             server_net: dict[str, Any], client_net: dict[str, Any], server_host: str, port: int,
             timeout: float = 600) -> dict[str, Any]:
    """Server container on one engine, client on another (or the same); the client's RESULT."""
    made = []
    try:
        server = server_engine.containers.run(IMAGE, ["python3", "-c", SCRIPT, "server", str(port)],
                                              name=f"{job}-srv", labels=labels(job), detach=True, **server_net)
        made.append(server)
        client = client_engine.containers.run(IMAGE, ["python3", "-c", SCRIPT, "client", server_host, str(port),
                                                      json.dumps(plan)],
                                              name=f"{job}-cli", labels=labels(job), detach=True, **client_net)
        made.append(client)
        code = client.wait(timeout=timeout).get("StatusCode")
        out = client.logs(stdout=True, stderr=True).decode(errors="replace")
        lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
        if code != 0 or not lines:
            raise RuntimeError(f"zmq client exited {code}: {out[-800:]}; server: "
                               f"{server.logs().decode(errors='replace')[-400:]}")
        return json.loads(lines[-1][len("RESULT "):])
    finally:
        remove_containers(made)


def merge(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Several rounds of one pair as one result; the round trips kept as their 1,001 permille quantiles
    (what the report reads), not every sample."""
    raw = [x for r in results for x in r["rtt_us"]]
    return {"rounds": len(results), "rtt_count": len(raw),
            "rtt_us": [round(percentile(raw, q / 10), 1) for q in range(1001)],
            "throughput": [t for r in results for t in r["throughput"]]}


def alternate(runs: dict[str, Any], rounds: int) -> dict[str, dict[str, Any]]:
    """Run each named pair `rounds` times, alternating their order, so a change in the machine's load
    between rounds hits overlay and host alike."""
    got: dict[str, list] = {name: [] for name in runs}
    names = list(runs)
    for i in range(rounds):
        for name in (names if i % 2 == 0 else names[::-1]):
            print(f"  {name} (round {i + 1})", flush=True)
            got[name].append(runs[name]())
    return {name: merge(results) for name, results in got.items()}


def overlay_pair(manager: docker.DockerClient, server_engine, client_engine, plan: dict) -> dict[str, Any]:
    job = f"bench-net-{uuid.uuid4().hex[:6]}"
    net = create_job_network(manager, job)
    try:
        srv = f"{job}-srv"
        return zmq_pair(server_engine, client_engine, job, plan, {"network": net.name, "hostname": srv},
                        {"network": net.name}, srv, 5555)
    finally:
        remove_job_network(manager, job, timeout_s=60)


def host_pair(server_engine, client_engine, plan: dict, server_ip: str, port: int) -> dict[str, Any]:
    job = f"bench-net-{uuid.uuid4().hex[:6]}"
    return zmq_pair(server_engine, client_engine, job, plan, {"network_mode": "host"}, {"network_mode": "host"},
                    server_ip, port)


# ---- cluster-in-a-box (across hosts) --------------------------------------------

def _free_subnets(host: docker.DockerClient) -> tuple[str, str]:
    pair = subnets.free_pair(host, [31], range(150, 198))
    if pair:
        return pair
    raise RuntimeError("no free pair of /24s in 172.31.150-199 for the benchmark's cluster")


class TwoNodes:
    """A 2-node cluster-in-a-box (no masters, no agents: hosts, engines and swarm membership only)."""

    def __init__(self, host: docker.DockerClient, home: Path) -> None:
        from scylla_singa.cluster.config import ClusterConfig
        lan, svc = _free_subnets(host)
        self.config = ClusterConfig(nodes=2, masters=0, agents=False, prefix=f"bn{uuid.uuid4().hex[:5]}",
                                    subnet=lan, services_subnet=svc, images=(IMAGE,), home=str(home))
        self.info = None
        self.host = host

    def __enter__(self) -> "TwoNodes":
        from scylla_singa.cluster.up_down import up
        started = time.monotonic()
        self.info = up(self.config, echo=lambda *a, **k: None)
        self.up_s = time.monotonic() - started
        return self

    def engine(self, i: int) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.info.nodes[i].docker_host, timeout=300)

    def address(self, i: int) -> str:
        return self.info.nodes[i].address

    def __exit__(self, *exc) -> None:
        from scylla_singa.cluster.up_down import down
        down(self.config, echo=lambda *a, **k: None, host=self.host)


# ---- runtime steps/s -------------------------------------------------------------

def runtime_conf(steps: int, one_process: bool) -> str:
    text = (REPO / "examples" / "frameworks" / "allreduce.conf").read_text()
    for key, value in (("train_steps", steps), ("disp_freq", 50), ("test_freq", 0), ("checkpoint_freq", 0)):
        text, n = re.subn(rf"^{key}:.*$", f"{key}: {value}", text, count=1, flags=re.M)
        if not n:
            text = f"{key}: {value}\n" + text
    per_procs = "  nworkers_per_procs: 4\n  nservers_per_procs: 4\n" if one_process else ""
    cluster = ("cluster {\n  nworker_groups: 1\n  nserver_groups: 1\n  nworkers_per_group: 4\n"
               f"  nservers_per_group: 4\n{per_procs}  workspace: \"/tmp/ws\"\n}}\n")
    return re.sub(r"^cluster \{.*?^\}\n?", cluster, text, flags=re.S | re.M)


def _ts(stamp: str) -> float:
    main, _, frac = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(main + "+00:00").timestamp() + float("0." + (frac or "0"))


def progress_rates(log: str, batch: int = 64) -> list[float]:
    """Steps/s of group 0 per display window, from `docker logs --timestamps` PROGRESS lines of worker 0."""
    points = []
    for line in log.splitlines():
        stamp, _, rest = line.partition(" ")
        if not rest.startswith("PROGRESS "):
            continue
        p = json.loads(rest[len("PROGRESS "):])
        if p.get("phase") == "train" and p.get("group") == 0 and p.get("worker") == 0:
            points.append((_ts(stamp), p["step"]))
    return [(s1 - s0) / (t1 - t0) for (t0, s0), (t1, s1) in zip(points, points[1:]) if t1 > t0]


def runtime_layout(client: docker.DockerClient, layout: str, steps: int, work: Path) -> list[float]:
    """Run the 4-process job in one layout; steps/s per display window."""
    job = f"bench-rt-{uuid.uuid4().hex[:6]}"
    cfg = work / job
    cfg.mkdir()
    cfg.chmod(0o755)
    (cfg / "job.conf").write_text(runtime_conf(steps, one_process=layout == "1 process"))
    vol = {str(cfg): {"bind": "/cfg", "mode": "ro"}}
    made, net = [], None
    try:
        if layout == "4 containers, overlay":
            net = create_job_network(client, job)
            hosts = [(f"{job}-proc-{k}", 6723) for k in range(4)]
        else:
            hosts = [("127.0.0.1", 6723 + k) for k in range(4)]
        (cfg / "cluster.json").write_text(json.dumps({"job": job, "nprocs": 4, "procs": [
            {"id": k, "host": h, "port": p} for k, (h, p) in enumerate(hosts)]}))
        base = "singa -conf /cfg/job.conf -workspace /tmp/ws"
        if layout == "4 containers, overlay":
            for k in range(4):
                made.append(client.containers.run(
                    IMAGE, ["sh", "-c", f"{base} -procs_id {k} -cluster /cfg/cluster.json"], name=hosts[k][0],
                    hostname=hosts[k][0], network=net.name, volumes=vol, labels=labels(job), detach=True))
        elif layout == "4 processes, 1 container":
            cmd = " ".join(f"{base} -procs_id {k} -cluster /cfg/cluster.json &" for k in range(4)) + " wait"
            made.append(client.containers.run(IMAGE, ["sh", "-c", cmd], name=f"{job}-all", volumes=vol,
                                              labels=labels(job), detach=True))
        else:
            made.append(client.containers.run(IMAGE, ["sh", "-c", base], name=f"{job}-one", volumes=vol,
                                              labels=labels(job), detach=True))
        for c in made:
            code = c.wait(timeout=600).get("StatusCode")
            if code != 0:
                raise RuntimeError(f"{layout}: {c.name} exited {code}: "
                                   f"{c.logs(stdout=False, stderr=True).decode(errors='replace')[-800:]}")
        rates = progress_rates(made[0].logs(stdout=True, stderr=False, timestamps=True).decode(errors="replace"))
        if len(rates) < 3:
            raise RuntimeError(f"{layout}: too few PROGRESS lines ({len(rates)} windows)")
        return rates[1:]  # the first window holds the start-up
    finally:
        remove_containers(made)
        if net is not None:
            remove_job_network(client, job, timeout_s=60)
        shutil.rmtree(cfg, ignore_errors=True)


RUNTIME_LAYOUTS = ("4 containers, overlay", "4 processes, 1 container", "1 process")


def run(size: str) -> dict[str, Any]:
    cfg = SIZES[size]
    plan = cfg["plan"]
    client = docker.from_env(timeout=300)
    client.images.get(IMAGE)
    ensure_swarm(client)
    out: dict[str, Any] = {"plan": plan, "rounds": cfg["rounds"], "pairs": {}, "runtime": {}, "cross_host": None}
    out["pairs"].update(alternate({
        "same host, overlay": lambda: overlay_pair(client, client, client, plan),
        "same host, host": lambda: host_pair(client, client, plan, "127.0.0.1", free_port())}, cfg["rounds"]))
    work = Path(tempfile.mkdtemp(prefix="scylla-bench-net-"))
    work.chmod(0o755)
    try:
        try:
            print("  across hosts: bringing a 2-node cluster-in-a-box up", flush=True)
            with TwoNodes(client, work / "home") as nodes:
                a, b = nodes.engine(0), nodes.engine(1)
                print(f"  across hosts: cluster up in {nodes.up_s:.0f}s", flush=True)
                out["pairs"].update(alternate({
                    "across hosts, overlay": lambda: overlay_pair(client, a, b, plan),
                    "across hosts, host": lambda: host_pair(a, b, plan, nodes.address(0), 5555)}, cfg["rounds"]))
                out["cross_host"] = {"nodes": 2, "up_s": nodes.up_s, "addresses": [nodes.address(0),
                                                                                    nodes.address(1)]}
        except Exception as exc:  # noqa: BLE001 - the row is then reported as not measured, with why
            out["cross_host"] = {"error": f"{exc.__class__.__name__}: {exc}"}
            print(f"  across hosts: not measured: {exc}", flush=True)
        for layout in RUNTIME_LAYOUTS:
            rates = []
            for _ in range(cfg["runtime_runs"]):
                rates += runtime_layout(client, layout, cfg["runtime_steps"], work)
            out["runtime"][layout] = rates
            print(f"  runtime {layout}: median {summarize(rates).median:.1f} steps/s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


# ---- report ----------------------------------------------------------------------

def _latency(pair: dict) -> Any:
    return summarize([x / 1e6 for x in pair["rtt_us"]])


def _bulk(pair: dict, size: int, key: str) -> Any:
    vals = [t[key] for t in pair["throughput"] if t["size"] == size]
    return summarize(vals) if vals else None


def section(data: dict[str, Any]) -> Section:
    pairs = data["pairs"]
    sizes = sorted({t["size"] for p in pairs.values() for t in p["throughput"]})
    rows = []
    headline = []
    for where in ("same host", "across hosts"):
        ov, host = pairs.get(f"{where}, overlay"), pairs.get(f"{where}, host")
        if not ov or not host:
            why = (data.get("cross_host") or {}).get("error", "not run")
            rows.append([where, "all", "not measured", "-", "host networking", "-", SLIM_TEXT, why])
            continue
        lo, lh = _latency(ov), _latency(host)
        r = ratio(lo.median, lh.median)
        rows.append([where, "round trip, 64 B (median)", f"{fmt_time(lo.median)} ({fmt_spread(lo)})",
                     f"{fmt_time(lh.median)} ({fmt_spread(lh)})", "host networking, same run", fmt_ratio(r),
                     "Slim, across hosts: 1.85x", _vs_slim(r, SLIM["latency"], lower_is_better=True)])
        for size in sizes:
            to, th = _bulk(ov, size, "mb_per_s"), _bulk(host, size, "mb_per_s")
            mo, mh = _bulk(ov, size, "msgs_per_s"), _bulk(host, size, "msgs_per_s")
            rt = ratio(to.median, th.median)
            rows.append([where, f"throughput, {_size(size)} messages",
                         f"{fmt_num(to.median)} MB/s ({fmt_num(mo.median)} msg/s)",
                         f"{fmt_num(th.median)} MB/s ({fmt_num(mh.median)} msg/s)", "host networking, same run",
                         fmt_ratio(rt), "Slim, across hosts: 0.52x",
                         _vs_slim(rt, SLIM["throughput"], lower_is_better=False)])
        if where == "across hosts" or not headline:
            big = max(sizes)
            rt = ratio(_bulk(ov, big, "mb_per_s").median, _bulk(host, big, "mb_per_s").median)
            headline = [Headline(f"5. Overlay vs host, {where}: 64 KiB throughput / 64 B round trip",
                                 f"{fmt_ratio(rt)} throughput, {fmt_ratio(r)} latency (overlay / host)",
                                 "host networking, same run; Slim published 0.52x / 1.85x across hosts",
                                 f"{fmt_ratio(rt)} / {fmt_ratio(r)}", "overhead below Slim's",
                                 "met" if rt and r and rt >= SLIM["throughput"] and r <= SLIM["latency"]
                                 else "missed")]
    msg_table = Table(["Path", "Measure", "Overlay", "Host", "Anchor", "Ratio (overlay / host)",
                       "Published anchor", "Ours vs published"], rows)
    rt_rows = []
    base = data["runtime"].get("4 processes, 1 container")
    for layout in RUNTIME_LAYOUTS:
        rates = data["runtime"].get(layout)
        if not rates:
            rt_rows.append([layout, "not measured", "-", "-", "-"])
            continue
        s = summarize(rates)
        r = ratio(s.median, summarize(base).median) if base else None
        rt_rows.append([layout, f"{fmt_num(s.median)} steps/s", fmt_spread(s, fmt_num),
                        "same job, 4 processes in 1 container (loopback)", fmt_ratio(r)])
    rt_table = Table(["Layout of the 4-process job", "Training speed (median)", "p10 - p90 (per window)",
                      "Anchor", "Ratio (ours / anchor)"], rt_rows,
                     caption="**The runtime over the overlay** (AllReduce, 4 workers + 4 servers, batch 64):")
    if data["runtime"].get("4 containers, overlay") and base:
        r = ratio(summarize(data["runtime"]["4 containers, overlay"]).median, summarize(base).median)
        headline.append(Headline("5b. Runtime, 4-process job: 4 containers on the overlay vs 1 container",
                                 f"{fmt_num(summarize(data['runtime']['4 containers, overlay']).median)} steps/s",
                                 "same job in one container (loopback), same run", fmt_ratio(r), "-",
                                 "reported"))
    plots = []
    series = []
    for name, pair in pairs.items():
        series.append(Series(name, [_size(s) for s in sizes],
                             [_bulk(pair, s, "mb_per_s").median for s in sizes],
                             [_bulk(pair, s, "mb_per_s").p10 for s in sizes],
                             [_bulk(pair, s, "mb_per_s").p90 for s in sizes]))
    plots.append(Plot("bench-network.png", "ZeroMQ throughput between two containers", "message size",
                      "MB/s (median, p10-p90)", series, kind="bar", logy=True))
    lat = [Series(name, ["64 B round trip"], [_latency(p).median * 1e6], [_latency(p).p10 * 1e6],
                  [_latency(p).p90 * 1e6]) for name, p in pairs.items()]
    plots.append(Plot("bench-network-latency.png", "ZeroMQ round-trip latency (64 B)", "", "microseconds", lat,
                      kind="bar"))
    notes = []
    ch = data.get("cross_host") or {}
    if ch.get("error"):
        notes.append(f"**Across hosts not measured:** the 2-node cluster-in-a-box could not be used: {ch['error']}")
    elif ch:
        notes.append(f"Across hosts: a 2-node cluster-in-a-box ({', '.join(ch['addresses'])}) brought up in "
                     f"{ch['up_s']:.0f} s and down again inside the benchmark; the \"hosts\" are network "
                     "namespaces of this one machine joined by veth pairs on a bridge, so a VXLAN packet never "
                     "leaves the kernel: the across-hosts numbers show the encapsulation's cost, not a NIC's.")
    notes.append("Both ends of every pair share this machine's 2 cores, so throughput is bounded by the Python "
                 "sender and receiver as much as by the path; the ratio to host networking in the same run is "
                 "the number to read.")
    intro = __doc__.split("\n\n", 1)[1].strip()
    return Section("network", "5. Network: ZeroMQ over the overlay", intro, [msg_table, rt_table], plots, notes,
                   headline)


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} B"


def _vs_slim(ours: float | None, slim: float, lower_is_better: bool) -> str:
    if ours is None:
        return "-"
    better = ours <= slim if lower_is_better else ours >= slim
    return "less overhead than Slim's" if better else "more overhead than Slim's"
