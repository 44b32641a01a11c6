"""Run the benchmarks and regenerate docs/benchmarks.md.

    python -m bench.run [--size quick|full] [--only NAME[,NAME...]] [--no-report]

Each benchmark's raw results go to bench/results/<name>.json (with the
machine, the date, the command and how long it took; a full run also to
bench/results/full/<name>.json); a benchmark that
raises is recorded with its error and the others still run. The report is
then rebuilt from every result file present.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys
import time
import traceback
from pathlib import Path

from . import machine
from .procs import stop_children_when_terminated
from .report import ORDER, RESULTS, write_report

SIZES = ("quick", "full")


def command_line(argv: list[str]) -> str:
    return "python -m bench.run" + ("" if not argv else " " + shlex.join(argv))


def compact(obj):
    """Floats to 6 significant digits, recursively: results stay small enough to commit."""
    if isinstance(obj, float):
        return float(f"{obj:.6g}")
    if isinstance(obj, dict):
        return {k: compact(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [compact(v) for v in obj]
    return obj


def run_one(name: str, size: str, command: str, results_dir: Path) -> dict:
    """Run benchmark `name`, write its result file, return the result."""
    module = importlib.import_module(f"bench.{name}")
    started = time.time()
    print(f"== {name} ({size}) ==", flush=True)
    result = {"name": name, "size": size, "command": command,
              "started_at": time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(started)),
              "machine": machine.describe()}
    try:
        result["data"] = module.run(size)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - record it and go on with the next benchmark
        traceback.print_exc()
        result["error"] = f"{exc.__class__.__name__}: {exc}"
    result["duration_s"] = round(time.time() - started, 1)
    result["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
    results_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(compact(result), separators=(",", ":")) + "\n"
    (results_dir / f"{name}.json").write_text(text)
    if size == "full":  # kept apart too, so a later quick run does not hide the full one from the report
        (results_dir / "full").mkdir(exist_ok=True)
        (results_dir / "full" / f"{name}.json").write_text(text)
    print(f"== {name}: {'failed: ' + result['error'] if 'error' in result else 'done'} "
          f"in {result['duration_s']:.0f}s ==", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    stop_children_when_terminated()
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default="quick")
    parser.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(ORDER)}")
    parser.add_argument("--no-report", action="store_true", help="do not rebuild docs/benchmarks.md")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(ORDER)
    unknown = [n for n in names if n not in ORDER]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(ORDER)}")
    command = command_line(argv)
    started = time.time()
    failed = []
    for name in names:
        if "error" in run_one(name, args.size, command, args.results):
            failed.append(name)
    if not args.no_report:
        path = write_report(args.results, command=command)
        print(f"wrote {path}")
    print(f"benchmarks took {time.time() - started:.0f}s" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
