"""Apache SINGA 0.3.0's own example confs through `scylla-singa run`, and examples/singa/README.md's table.

    python -m bench.singa_examples [--only mnist-mlp,rbm1] [--image singa:latest] [--no-readme]

Every CPU example of SINGA 0.3.0 (examples/singa/: the mnist MLP and convnet,
the cifar10 convnet and its hybrid partitioning, the RBM pretraining chain
rbm1-4 and the autoencoder that fine-tunes it, rnnlm) runs as a job of the
framework, one after another, on one embedded master and agent on this
machine's Docker engine, with one shared workspace (`run --workspace`), so
each RBM conf's `checkpoint_path` finds the earlier ones' checkpoints as in
SINGA's own examples directory. rnnlm runs SINGA's example program with its
own layers (`singa-rnnlm`: `run --env SCYLLA_SINGA_LOCAL_BIN=singa-rnnlm`).

For each: the processes the job ran as, the metric its conf makes SINGA
report (first and last value, at which step), the wall time of `run` (job
submitted to job ended: placement, containers, SINGA's start, training,
SINGA's tests, cleanup) and SINGA's own time (singa-task's FINAL `wall_s`).
Results go to examples/singa/results.json and the table between the markers
of examples/singa/README.md. About 25 minutes for all here (2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scylla_singa.contracts import PROGRESS_PREFIX
from . import machine

REPO = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = REPO / "examples" / "singa"
RESULTS = EXAMPLES_DIR / "results.json"
README = EXAMPLES_DIR / "README.md"
CLI = [sys.executable, "-m", "scylla_singa"]
MARKERS = ("<!-- results:start -->", "<!-- results:end -->")
METRIC_TITLES = {"accuracy": "accuracy", "squared_error": "reconstruction error (`Squared Error`)",
                 "loss": "reconstruction loss (Euclidean)", "perplexity": "perplexity"}
PHASE_TITLES = {"test": "test", "train": "train", "validate": "validation"}


@dataclass(frozen=True)
class Example:
    """One example conf and what to read of its run."""

    key: str           # --only name
    title: str
    conf: str          # under examples/singa/
    phase: str         # which of SINGA's displays carries the metric: test, train, validate
    metric: str        # a name of singa-task's PROGRESS "metrics"
    changed: str       # what differs from SINGA's conf besides the data paths and workspace
    program: str = ""  # a SINGA program with the example's own layers (SCYLLA_SINGA_LOCAL_BIN)
    cpus: float = 0    # CPUs per process when the planned ones (one per thread) exceed this machine's cores

    def run_args(self) -> list[str]:
        """`run` options the example needs: its own program for singa-task to run, fewer CPUs than threads."""
        args = ["--env", f"SCYLLA_SINGA_LOCAL_BIN={self.program}"] if self.program else []
        return args + (["--cpus", f"{self.cpus:g}"] if self.cpus else [])


SHARE_FROM = "`share_from` (below)"
EXAMPLES = (
    Example("mnist-mlp", "MNIST MLP (6 layers, 10 M parameters)", "mnist-mlp/job.conf", "test", "accuracy",
            "nothing"),
    Example("mnist-conv", "MNIST convnet", "mnist-conv/conv.conf", "test", "accuracy", "nothing"),
    Example("cifar10", "CIFAR-10 convnet", "cifar10/job.conf", "test", "accuracy", "nothing"),
    Example("cifar10-hybrid", "CIFAR-10 hybrid partitioning (2 workers)", "cifar10/hybrid.conf", "train", "accuracy",
            "nothing (the conf has `test_steps: 0`)", cpus=2),   # 2 workers + a server thread: 3 planned CPUs
    Example("rbm1", "RBM 1", "rbm/rbm1.conf", "test", "squared_error", SHARE_FROM),
    Example("rbm2", "RBM 2 (from RBM 1's checkpoint)", "rbm/rbm2.conf", "test", "squared_error",
            f"{SHARE_FROM}, `checkpoint_path`"),
    Example("rbm3", "RBM 3", "rbm/rbm3.conf", "test", "squared_error", f"{SHARE_FROM}, `checkpoint_path`"),
    Example("rbm4", "RBM 4", "rbm/rbm4.conf", "test", "squared_error", f"{SHARE_FROM}, `checkpoint_path`"),
    Example("autoencoder", "Autoencoder (fine-tuning the 4 RBMs)", "rbm/autoencoder.conf", "test", "loss",
            f"{SHARE_FROM}, `checkpoint_path`"),
    Example("rnnlm", "RNN language model (its own layers: `singa-rnnlm`)", "rnnlm/job.conf", "validate",
            "perplexity", "vocabulary and classes of the corpus; steps scaled to its size", program="singa-rnnlm"),
)


def progress_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line[len(PROGRESS_PREFIX) + 1:]) for line in stdout.splitlines()
            if line.startswith(PROGRESS_PREFIX + " ")]


def metric_curve(reports: list[dict[str, Any]], phase: str, metric: str) -> list[tuple[int, float]]:
    """(step, value) of `metric` in `phase` displays, in order (one per step: a display's last)."""
    by_step: dict[int, float] = {}
    for p in reports:
        value = (p.get("metrics") or {}).get(metric)
        if p.get("phase") == phase and value is not None:
            by_step[p["step"]] = value
    return sorted(by_step.items())


def run_example(ex: Example, image: str, master: str, workspace: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run one example through `scylla-singa run`; what the table needs, or the failure."""
    # --runtime: these are Apache SINGA's own confs, whatever the image's io.scylla.runtime label says.
    args = ["run", "--json", "--image", image, "--runtime", "apache-singa", "--master", master,
            "--workspace", str(workspace)]
    args += ex.run_args()
    started = time.monotonic()
    r = subprocess.run(CLI + args + [str(EXAMPLES_DIR / ex.conf)], capture_output=True, text=True, env=env,
                       cwd=REPO, timeout=3600)
    wall = time.monotonic() - started
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    out = json.loads(lines[-1]) if lines else {}
    result: dict[str, Any] = {**asdict(ex), "exit": r.returncode, "wall_s": round(wall, 1),
                              "state": out.get("state"), "procs": len(out.get("procs", [])),
                              "agents": sorted({p["agent"] for p in out.get("procs", [])})}
    if r.returncode != 0 or not out:
        result["error"] = r.stderr[-1500:]
        return result
    logs = subprocess.run(CLI + ["logs", out["job"]], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    reports = progress_lines(logs.stdout)
    final = next((json.loads(line[6:]) for line in reversed(logs.stdout.splitlines()) if line.startswith("FINAL ")),
                 {})
    curve = metric_curve(reports, ex.phase, ex.metric)
    result.update(job=out["job"], steps=out.get("steps"), singa_wall_s=final.get("wall_s"), curve=curve,
                  first=curve[0] if curve else None, last=curve[-1] if curve else None)
    return result


def run_all(only: set[str], image: str, home: Path) -> list[dict[str, Any]]:
    from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos

    env = {**os.environ, "SCYLLA_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    workspace = home / "jobs" / "singa-examples"
    results = []
    with EmbeddedMesos([AgentSpec()], allowed_host_paths=[home / "jobs"]) as mesos:
        for ex in EXAMPLES:
            if only and ex.key not in only:
                continue
            print(f"== {ex.key}: {ex.conf}", flush=True)
            result = run_example(ex, image, mesos.master_address, workspace, env)
            print(f"   {result.get('state')} in {result['wall_s']:.0f}s: {result.get('first')} -> "
                  f"{result.get('last')}{' ' + result['error'][-300:] if 'error' in result else ''}", flush=True)
            results.append(result)
    return results


# ---- the README table (pure) ------------------------------------------------------

@dataclass(frozen=True)
class ByHand:
    """An example's result measured by hand (`docker run` of singa-task, one process), not yet re-run here."""

    result: str
    wall_s: int


# SINGA's slow examples as measured by hand on this machine (examples/singa/README.md before this script):
# the table keeps them, marked, until a run of this script measures them through the framework.
BY_HAND = {
    "mnist-mlp": ByHand("test accuracy 0.971 at step 960 of 1,000", 90),
    "mnist-conv": ByHand("test accuracy 0.989 at step 9,500 of 10,000", 408),
    "cifar10": ByHand("test accuracy 0.961 at step 800 of 1,000 (0.975 at 400)", 206),
    "cifar10-hybrid": ByHand("train accuracy 0.987 at step 990", 137),
    "rbm1": ByHand("test reconstruction error (`Squared Error`) 1.77 at step 5,500 of 6,000 (117 at step 0)", 85),
    "rbm2": ByHand("test reconstruction error (`Squared Error`) 1.10 at step 5,500 of 6,000 (134 at step 0)", 54),
    "rbm3": ByHand("test reconstruction error (`Squared Error`) 0.97 at step 5,500 of 6,000 (65.7 at step 0)", 31),
    "rbm4": ByHand("test reconstruction error (`Squared Error`) 1.24 at step 5,500 of 6,000 (21.9 at step 0)", 24),
    "autoencoder": ByHand("test reconstruction loss (Euclidean) 0.624 at step 12,000 of 12,200 (2.83 at step 0)",
                          218),
    "rnnlm": ByHand("validation perplexity 2.72 at step 5,270 (12.2 at step 0)", 31),
}


def describe(r: dict[str, Any]) -> str:
    if r.get("error") or not r.get("last"):
        return f"did not finish (exit {r['exit']})"
    name = f"{PHASE_TITLES[r['phase']]} {METRIC_TITLES[r['metric']]}"
    (step, value), (step0, value0) = r["last"], r["first"]
    text = f"{name} {number(value)} at step {step:,} of {r['steps']:,}"
    return text + (f" ({number(value0)} at step {step0:,})" if step0 != step else "")


def number(value: float) -> str:
    """Three significant digits, kept when they are zeros (1.00, not 1)."""
    return f"{value:.3g}" if abs(value) >= 100 else f"{value:#.3g}"


def table(results: list[dict[str, Any]]) -> str:
    """Every example: its run through the framework when `results` has one, else its by-hand result, marked."""
    rows = ["| Example | Conf | Run | Processes | Result | Wall time | SINGA's own time | Changed besides data paths |",
            "|---|---|---|---|---|---|---|---|"]
    measured = {r["key"]: r for r in results}
    for ex in EXAMPLES:
        r = measured.get(ex.key)
        if r is not None:
            own = f"{r['singa_wall_s']:.0f} s" if r.get("singa_wall_s") else "-"
            rows.append(f"| {ex.title} | `{ex.conf}` | `scylla-singa run` | {r['procs'] or '-'} | {describe(r)} "
                        f"| {r['wall_s']:.0f} s | {own} | {ex.changed} |")
        elif ex.key in BY_HAND:
            hand = BY_HAND[ex.key]
            rows.append(f"| {ex.title} | `{ex.conf}` | **by hand** (`docker run`) | 1 | {hand.result} "
                        f"| {hand.wall_s} s (by hand) | - | {ex.changed} |")
    return "\n".join(rows)


def write_readme(results: list[dict[str, Any]], header: str, path: Path = README) -> None:
    """Replace the table between the markers of examples/singa/README.md."""
    text = path.read_text()
    start, end = MARKERS
    if start not in text or end not in text:
        raise SystemExit(f"{path} has no {start} ... {end} markers")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{start}\n{header}\n\n{table(results)}\n{end}{tail}")


def merge(previous: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results of a partial run (`--only`) in place of those examples' earlier ones, in EXAMPLES order."""
    by_key = {r["key"]: r for r in previous} | {r["key"]: r for r in new}
    return [by_key[ex.key] for ex in EXAMPLES if ex.key in by_key]


def readme_header(record: dict[str, Any]) -> str:
    """Who measured the table's rows and when: every run whose results it keeps (a partial run keeps others')."""
    runs: dict[tuple[str, str], list[str]] = {}
    for r in record["examples"]:
        stamp = (r.get("measured", record["generated"]), r.get("load", record.get("load_at_start", "?")))
        runs.setdefault(stamp, []).append(r["key"])
    when = "; ".join(f"{at} (load average {load}): {', '.join(keys)}" for (at, load), keys in runs.items())
    return (f"Measured by `python -m bench.singa_examples` (image {record['image']}), one job at a time through "
            f"`scylla-singa run` on an embedded master and agent (2 cores, shared with other work), in these runs: "
            f"{when}. Rows marked **by hand** were not run through the framework by this script yet: their "
            f"numbers are from `docker run` of singa-task by hand, one process.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.singa_examples", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help=f"comma-separated: {', '.join(e.key for e in EXAMPLES)}")
    parser.add_argument("--image", default=os.environ.get("SCYLLA_SINGA_IMAGE", "singa:latest"))
    parser.add_argument("--no-readme", action="store_true", help="write results.json only")
    parser.add_argument("--table-only", action="store_true",
                        help="run nothing: write the README table again from results.json")
    args = parser.parse_args(argv)
    only = {k.strip() for k in args.only.split(",") if k.strip()}
    unknown = only - {e.key for e in EXAMPLES}
    if unknown:
        parser.error(f"unknown example(s) {', '.join(sorted(unknown))}")
    if args.table_only:
        record = json.loads(RESULTS.read_text())
        write_readme(record["examples"], readme_header(record))
        return 0
    started = time.strftime("%Y-%m-%d %H:%M %Z")
    load = machine.describe().get("load", "?")
    with tempfile.TemporaryDirectory(prefix="scylla-singa-examples-") as home:
        results = [{**r, "measured": started, "load": load} for r in run_all(only, args.image, Path(home))]
    previous = json.loads(RESULTS.read_text())["examples"] if RESULTS.exists() and only else []
    merged = merge(previous, results)
    record = {"generated": started, "image": args.image, "command": "python -m bench.singa_examples"
              + (f" --only {args.only}" if only else ""), "load_at_start": load, "machine": machine.describe(),
              "examples": merged}
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    if not args.no_readme:
        write_readme(merged, readme_header(record))
    failed = [r["key"] for r in results if r.get("error")]
    print(f"wrote {RESULTS}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
