"""Where the scalability benchmark's CPU goes: one cluster size of bench/scale.py under py-spy.

    python -m bench.scale_profile [--agents 10000] [--seconds 30] [--parts master,fleet,frameworks]
                                  [--before CHECKOUT] [--after CHECKOUT] [--out DIR] [--save] [--record]

Runs `bench.scale.one_size` (master, simulated fleet, 200 background
frameworks, probe) and, as its probing window starts, samples each named
part with `py-spy record --format raw` (collapsed stacks, `<part>.txt` in
DIR). It reports each part's CPU per background task (CPU seconds over the
window / tasks finished in it) and splits the master's by kind of work
(bench/profile_kinds.py). With `--before CHECKOUT` (another worktree, e.g.
`git worktree add ../scale-base <commit>`) the same size runs first with
that checkout's master and agents, then with this one's, back to back: the
before/after of a change measured on the same machine in one run;
`--after CHECKOUT` runs another checkout second instead of this one (the
same pair in the other order, to see what running second does). `--save`
writes the result to bench/results/scale_profile.json, which the scale
section of docs/benchmarks.md shows; `--record` (and `--save`) add a line
per run to bench/results/scale_profile_runs.jsonl, whose spread the section
shows beside it: one run's CPU per task moves by several percent with
what else the machine does. py-spy needs ptrace (root or
CAP_SYS_PTRACE): `pip install py-spy`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .procs import Child, stop_children_when_terminated
from .profile_kinds import split_by_kind
from .scale import CODE_ENV, REPO, SIZES, code_under_test, one_size

SAVED = REPO / "bench" / "results" / "scale_profile.json"
RUNS = REPO / "bench" / "results" / "scale_profile_runs.jsonl"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def profile_once(agents: int, seconds: int, warmup: float, parts: list[str], out: Path, spy: str | None
                 ) -> dict[str, Any]:
    """One size, sampled; its CPU per task by part and the master's split by kind."""
    out.mkdir(parents=True, exist_ok=True)
    samplers: list[subprocess.Popen] = []

    def attach(children: dict[str, Child]) -> None:
        for part in parts:
            samplers.append(subprocess.Popen(
                [spy, "record", "--pid", str(children[part].pid), "--duration", str(seconds), "--rate", "100",
                 "--nonblocking", "--format", "raw", "--output", str(out / f"{part}.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    cfg = {**SIZES["quick"], "probes": max(3, seconds // 10 + 1), "warmup_s": warmup}
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="scylla-bench-profile-") as tmp:
        point = one_size(agents, cfg, Path(tmp), on_window=attach if parts else None)
    for s in samplers:
        s.wait(60)
    cpu, rate = point.get("cpu_percent", {}), point.get("tasks_finished_per_s") or 0
    summary: dict[str, Any] = {
        "agents": agents, "code": code_under_test(), "tasks_finished_per_s": rate, "cpu_percent": cpu,
        "ms_per_task": {k: round(10 * v / rate, 3) for k, v in cpu.items()} if rate else {},
        "kernel_share": point.get("kernel_share", {}), "wait_percent": point.get("wait_percent", {}),
        # read and write system calls per background task finished (socket I/O, mostly), by part
        "io_calls_per_task": {k: [round(n / (rate * point["window_s"]), 2) for n in v]
                              for k, v in point.get("io_calls", {}).items()} if rate and point.get("window_s") else {},
        "probes": point.get("probes", []), "window_s": point.get("window_s"),
        "load_average": [load_before, load_average()], "error": point.get("error"), "tails": point.get("tails")}
    summary["kinds"] = {part: split_by_kind((out / f"{part}.txt").read_text())
                        for part in parts if (out / f"{part}.txt").exists()}
    return summary


def run_record(started_at: str, order: str, run: dict[str, Any]) -> dict[str, Any]:
    """One line of RUNS: which code ran, at what size and rate, and its CPU per task by part."""
    overheads = sorted(p["overhead_s"] for p in run.get("probes") or [] if p.get("overhead_s") is not None)
    return {"started_at": started_at, "order": order, "commit": run.get("code", {}).get("commit", "?"),
            "agents": run.get("agents"), "tasks_finished_per_s": round(run.get("tasks_finished_per_s") or 0, 1),
            "ms_per_task": run.get("ms_per_task", {}), "load_average": (run.get("load_average") or ["?"])[0],
            "probe_median_s": round(overheads[len(overheads) // 2], 4) if overheads else None,
            "error": run.get("error")}


def main(argv: list[str] | None = None) -> int:
    stop_children_when_terminated()
    parser = argparse.ArgumentParser(prog="python -m bench.scale_profile", description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10000)
    parser.add_argument("--seconds", type=int, default=30, help="how long to sample each part")
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds of churn before the window")
    parser.add_argument("--parts", default="master", help="comma-separated: master, fleet, frameworks; '' for none")
    parser.add_argument("--before", type=Path, help="a checkout whose master and agents run first (before/after)")
    parser.add_argument("--after", type=Path, help="a checkout whose master and agents run second (default: this one)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "scylla-scale-profile")
    parser.add_argument("--save", action="store_true", help=f"write the result to {SAVED.relative_to(REPO)}")
    parser.add_argument("--record", action="store_true",
                        help=f"add each run's CPU per task to {RUNS.relative_to(REPO)} (--save does too)")
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if parts and not Path(spy).exists():
        print("py-spy is not installed: `.venv/bin/pip install py-spy` (it samples the processes by ptrace), "
              "or give --parts '' to measure CPU per task only", file=sys.stderr)
        return 2
    for flag, checkout in (("--before", args.before), ("--after", args.after)):
        if checkout is not None and not (checkout / "scylla_singa").is_dir():
            print(f"{flag} {checkout}: not a checkout of scylla-singa (no scylla_singa/ in it)", file=sys.stderr)
            return 2
    result: dict[str, Any] = {"started_at": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    if args.before is not None:
        os.environ[CODE_ENV] = str(args.before.resolve())
        try:
            result["before"] = profile_once(args.agents, args.seconds, args.warmup, parts, args.out / "before", spy)
        finally:
            del os.environ[CODE_ENV]
    if args.after is not None:
        os.environ[CODE_ENV] = str(args.after.resolve())
    try:
        result["after"] = profile_once(args.agents, args.seconds, args.warmup, parts, args.out / "after", spy)
    finally:
        os.environ.pop(CODE_ENV, None)
    result["finished_at"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    text = json.dumps(result, indent=1)
    print(text)
    if args.save:
        SAVED.write_text(text + "\n")
    if args.save or args.record:
        with RUNS.open("a") as runs:
            for order in ("before", "after"):
                if order in result:
                    runs.write(json.dumps(run_record(result["started_at"], order, result[order])) + "\n")
    return 0 if not any(r.get("error") for k, r in result.items() if k in ("before", "after")) else 1


if __name__ == "__main__":
    raise SystemExit(main())
