"""Where the scalability benchmark's CPU goes: one cluster size of bench/scale.py under py-spy.

    python -m bench.scale_profile [--agents 5000] [--seconds 30] [--out DIR] [--parts master,fleet,frameworks]

Runs `bench.scale.one_size` (master, simulated fleet, 200 background
frameworks, probe) and, as its probing window starts, samples each named
part with `py-spy record --format raw` (collapsed stacks). Writes one
`<part>.txt` per part into DIR and prints the master's CPU per background
task and its split by kind of work (`bench.profile_kinds`). py-spy needs
ptrace (root, or CAP_SYS_PTRACE): install it with `pip install py-spy`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .procs import Child
from .profile_kinds import split_by_kind
from .scale import SIZES, code_under_test, one_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_profile", description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=5000)
    parser.add_argument("--seconds", type=int, default=30, help="how long to sample each part")
    parser.add_argument("--out", type=Path, default=Path("bench/results/profile"))
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds of churn before the window")
    parser.add_argument("--parts", default="master", help="comma-separated: master, fleet, frameworks")
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("py-spy is not installed: `.venv/bin/pip install py-spy` (it samples the processes by ptrace)",
              file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    parts = [p for p in args.parts.split(",") if p]   # none: only the CPU per task
    samplers: list[subprocess.Popen] = []

    def attach(children: dict[str, Child]) -> None:
        for part in parts:
            samplers.append(subprocess.Popen(
                [spy, "record", "--pid", str(children[part].pid), "--duration", str(args.seconds), "--rate", "100",
                 "--nonblocking", "--format", "raw", "--output", str(args.out / f"{part}.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    cfg = {**SIZES["quick"], "probes": max(3, args.seconds // 10 + 1), "warmup_s": args.warmup}
    with tempfile.TemporaryDirectory(prefix="scylla-bench-profile-") as tmp:
        point = one_size(args.agents, cfg, Path(tmp), on_window=attach)
    for s in samplers:
        s.wait(60)
    cpu, rate = point.get("cpu_percent", {}), point.get("tasks_finished_per_s") or 0
    summary = {"agents": args.agents, "code": code_under_test(), "tasks_finished_per_s": rate, "cpu_percent": cpu,
               "ms_per_task": {k: round(10 * v / rate, 3) for k, v in cpu.items()} if rate else {},
               "overheads_s": [p.get("overhead_s") for p in point.get("probes", [])], "error": point.get("error"),
               "tails": point.get("tails")}
    kinds = {}
    for part in parts:
        stacks = args.out / f"{part}.txt"
        if stacks.exists():
            kinds[part] = split_by_kind(stacks.read_text())
    summary["kinds"] = kinds
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    return 0 if not point.get("error") else 1


if __name__ == "__main__":
    raise SystemExit(main())
