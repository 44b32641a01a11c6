"""docs/benchmarks.md and docs/bench-*.png from the results in bench/results/.

    python -m bench.report            # regenerate the report from the stored results

Each benchmark module turns its raw results into a `Section` (tables, plots,
notes and its headline rows); this module renders sections to Markdown
(pure: `render_markdown`) and draws the plots with matplotlib (`draw_plot`).
A benchmark that failed or was not run still gets its section, saying so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
DOCS = REPO / "docs"
ORDER = ("allocation", "scale", "placement", "launch", "network", "training", "singa_side_by_side")
TITLES = {
    "allocation": "1. Allocation round",
    "scale": "2. The Mesos paper's scalability experiment",
    "placement": "3. Placement latency",
    "launch": "4. Job launch latency",
    "network": "5. Network: ZeroMQ over the overlay",
    "training": "6. Training throughput",
    "singa_side_by_side": "7. Apache SINGA side by side with the Python runtime",
}


@dataclass
class Table:
    """A Markdown table; every cell already formatted."""

    columns: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Series:
    """One line (or one bar group member) of a plot; lo/hi draw the spread."""

    label: str
    x: list[Any]
    y: list[float | None]
    lo: list[float | None] | None = None
    hi: list[float | None] | None = None


@dataclass
class Plot:
    """A PNG under docs/: `kind` "line" (x numeric) or "bar" (x categories, one bar per series)."""

    filename: str
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    kind: str = "line"
    logx: bool = False
    logy: bool = False
    hlines: list[tuple[float, str]] = field(default_factory=list)


@dataclass
class Headline:
    """One row of the report's headline table."""

    benchmark: str
    measured: str
    anchor: str
    ratio: str
    goal: str
    result: str


@dataclass
class Section:
    name: str
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    headline: list[Headline] = field(default_factory=list)
    run_info: str = ""


# ---- Markdown (pure) -------------------------------------------------------

def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_table(table: Table) -> str:
    """A GitHub Markdown table; a row shorter than the header is padded, a longer one is an error."""
    for row in table.rows:
        if len(row) > len(table.columns):
            raise ValueError(f"row {row} has more cells than the header {table.columns}")
    lines = []
    if table.caption:
        lines += [table.caption, ""]
    lines.append("| " + " | ".join(_cell(c) for c in table.columns) + " |")
    lines.append("|" + "|".join("---" for _ in table.columns) + "|")
    for row in table.rows:
        cells = list(row) + [""] * (len(table.columns) - len(row))
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


HEADLINE_COLUMNS = ["Benchmark", "Measured here", "Anchor", "Ratio (ours / anchor)", "Goal", "Result"]


def headline_table(sections: Sequence[Section]) -> Table:
    """Every section's headline rows, by benchmark (a full-run appendix row right after its quick one)."""
    rank = {name: i for i, name in enumerate(ORDER)}
    ordered = sorted(sections, key=lambda s: rank.get(s.name, len(rank)))  # stable: appendix stays second
    rows = [[h.benchmark, h.measured, h.anchor, h.ratio, h.goal, h.result] for s in ordered for h in s.headline]
    return Table(HEADLINE_COLUMNS, rows)


def machine_table(machine: dict[str, Any]) -> Table:
    keys = [("cpu", "CPU"), ("cores", "Cores"), ("memory", "Memory"), ("kernel", "Kernel"), ("os", "OS"),
            ("python", "Python"), ("numpy", "numpy"), ("pyzmq", "pyzmq / libzmq"), ("docker_engine", "Docker engine"),
            ("docker_sdk", "Docker SDK"), ("commit", "Commit"),
            ("load", "Load average when the last benchmark started (1 / 5 / 15 min)")]
    return Table(["", ""], [[label, str(machine.get(k, "-"))] for k, label in keys if k in machine])


def render_section(section: Section) -> str:
    parts = [f"## {section.title}", ""]
    if section.intro:
        parts += [section.intro.strip(), ""]
    for table in section.tables:
        parts += [render_table(table), ""]
    for plot in section.plots:
        parts += [f"![{plot.title}]({plot.filename})", ""]
    for note in section.notes:
        parts += [note if note.startswith(("- ", "* ", "> ")) else f"- {note}"]
    if section.notes:
        parts.append("")
    if section.run_info:
        parts += [f"_{section.run_info}_", ""]
    return "\n".join(parts)


def quick_run_time(results: dict[str, dict[str, Any]]) -> str:
    """How long `make bench` (quick) takes: the sum of the latest quick result of every benchmark."""
    quick = {name: r for name, r in results.items() if r.get("size") == "quick" and "duration_s" in r}
    if not quick:
        return ""
    minutes, seconds = divmod(int(round(sum(r["duration_s"] for r in quick.values()))), 60)
    missing = sorted(set(ORDER) - set(quick))
    return (f"A quick run of {'these' if missing else 'all'} {len(quick)} benchmarks takes {minutes}m{seconds:02d}s "
            f"here (the sum of their latest quick results' durations"
            + (f"; without {', '.join(missing)}, whose latest result is not a quick one" if missing else "") + ").")


def render_markdown(sections: Sequence[Section], machine: dict[str, Any], generated: str, command: str,
                    quick_time: str = "") -> str:
    """The whole of docs/benchmarks.md."""
    parts = [
        "# Benchmarks",
        "",
        "scylla-singa measured side by side with its anchors, on one machine, in one run per benchmark.",
        "Medians with their spread (p10 - p90 unless said otherwise); ratios are ours / anchor, each measured "
        "in the same run on the same machine unless the anchor is a published figure (then it says so).",
        "Regenerate with `make bench` (quick) or `make bench SIZE=full`; "
        "`python -m bench.report` redraws this page from `bench/results/*.json` without rerunning. "
        "Sections titled *Full run* come from the last `make bench SIZE=full` (`bench/results/full/`), kept "
        "below when a later quick run has replaced them.",
        "",
        f"Generated {generated} by `{command}`." + (f" {quick_time}" if quick_time else ""),
        "",
        "## Machine",
        "",
        render_table(machine_table(machine)),
        "",
        "## Headline",
        "",
        render_table(headline_table(sections)),
        "",
    ]
    for section in sections:
        parts.append(render_section(section))
    return "\n".join(parts).rstrip() + "\n"


def not_measured_section(name: str, why: str, run_info: str = "") -> Section:
    """The section of a benchmark that has no results (never run, or it failed)."""
    title = TITLES.get(name, name)
    return Section(name, title, intro=f"**Not measured:** {why}", run_info=run_info,
                   headline=[Headline(title, "not measured", "-", "-", "-", "not measured")])


def run_info(result: dict[str, Any]) -> str:
    started = result.get("started_at", "?")
    minutes, seconds = divmod(int(round(result.get("duration_s", 0))), 60)
    load = (result.get("machine") or {}).get("load")
    return (f"Measured {started} with `{result.get('command', '?')}` (size {result.get('size', '?')}, "
            f"{minutes}m{seconds:02d}s{', load average at start ' + load if load else ''}).")


# ---- plots -----------------------------------------------------------------

def draw_plot(plot: Plot, out_dir: Path) -> Path:
    """Write one PNG; returns its path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    if plot.kind == "bar":
        _bars(ax, plot)
    else:
        _lines(ax, plot)
    for y, label in plot.hlines:
        ax.axhline(y, color="crimson", linestyle="--", linewidth=1.2)
        ax.annotate(label, xy=(0.01, y), xycoords=("axes fraction", "data"), color="crimson", fontsize=8,
                    va="bottom")
    if plot.logx:
        ax.set_xscale("log")
    if plot.logy:
        ax.set_yscale("log")
    ax.set_title(plot.title, fontsize=11)
    ax.set_xlabel(plot.xlabel)
    ax.set_ylabel(plot.ylabel)
    ax.grid(True, which="both", alpha=0.3)
    if any(s.label for s in plot.series):
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = out_dir / plot.filename
    fig.savefig(path)
    plt.close(fig)
    return path


def _lines(ax, plot: Plot) -> None:
    for s in plot.series:
        pts = [(x, y, lo, hi) for x, y, lo, hi in zip(s.x, s.y, s.lo or [None] * len(s.x), s.hi or [None] * len(s.x))
               if y is not None]
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        line, = ax.plot(xs, ys, marker="o", markersize=4, label=s.label)
        if s.lo is not None and s.hi is not None:
            band = [(p[0], p[2], p[3]) for p in pts if p[2] is not None and p[3] is not None]
            if band:
                ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band],
                                color=line.get_color(), alpha=0.18)


def _bars(ax, plot: Plot) -> None:
    cats = list(dict.fromkeys(x for s in plot.series for x in s.x))
    n = max(len(plot.series), 1)
    width = 0.8 / n
    for i, s in enumerate(plot.series):
        pos, heights, errs = [], [], [[], []]
        for x, y, lo, hi in zip(s.x, s.y, s.lo or [None] * len(s.x), s.hi or [None] * len(s.x)):
            if y is None:
                continue
            pos.append(cats.index(x) - 0.4 + width * (i + 0.5))
            heights.append(y)
            errs[0].append(max(0.0, y - lo) if lo is not None else 0.0)
            errs[1].append(max(0.0, hi - y) if hi is not None else 0.0)
        ax.bar(pos, heights, width=width, label=s.label, yerr=errs if s.lo is not None else None, capsize=3)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels([str(c) for c in cats], fontsize=8)


# ---- files -----------------------------------------------------------------

def load_results(results_dir: Path = RESULTS) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in ORDER:
        path = results_dir / f"{name}.json"
        if path.exists():
            out[name] = json.loads(path.read_text())
    return out


def build_sections(results: dict[str, dict[str, Any]]) -> list[Section]:
    """One section per benchmark, in ORDER; a broken summariser shows as not measured, not as a crash."""
    sections = []
    for name in ORDER:
        result = results.get(name)
        if result is None:
            sections.append(not_measured_section(name, "this benchmark has not been run yet."))
            continue
        info = run_info(result)
        if result.get("error"):
            sections.append(not_measured_section(name, f"the run failed: {result['error']}", info))
            continue
        try:
            module = importlib.import_module(f"bench.{name}")
            section = module.section(result["data"])
        except Exception as exc:  # noqa: BLE001 - the report must still be written
            section = not_measured_section(name, f"its results could not be summarised: {exc!r}")
        section.title = section.title or TITLES[name]
        section.run_info = info
        sections.append(section)
    return sections


def full_sections(latest: dict[str, dict[str, Any]], full: dict[str, dict[str, Any]]) -> list[Section]:
    """Sections of the last full run where the latest result is another (quick) run: an appendix."""
    out = []
    older = {k: v for k, v in full.items() if latest.get(k, {}).get("finished_at") != v.get("finished_at")}
    for section in build_sections(older):
        if section.name not in older:
            continue
        section.title = f"Full run: {section.title}"
        for plot in section.plots:
            plot.filename = plot.filename.replace("bench-", "bench-full-", 1)
        for h in section.headline:
            h.benchmark = f"{h.benchmark} (full run)"
        out.append(section)
    return out


def write_report(results_dir: Path = RESULTS, docs_dir: Path = DOCS, command: str | None = None) -> Path:
    """Regenerate docs/benchmarks.md and its PNGs from the results; returns the Markdown's path.

    The latest result of each benchmark makes the page; results of the last full run
    (bench/results/full/) that a later quick run replaced follow as an appendix."""
    results = load_results(results_dir)
    sections = build_sections(results) + full_sections(results, load_results(results_dir / "full"))
    docs_dir.mkdir(parents=True, exist_ok=True)
    for section in sections:
        for plot in section.plots:
            try:
                draw_plot(plot, docs_dir)
            except Exception as exc:  # noqa: BLE001
                section.notes.append(f"plot {plot.filename} could not be drawn: {exc!r}")
    latest = max(results.values(), key=lambda r: r.get("finished_at", ""), default={})
    machine = latest.get("machine") or {}
    generated = time.strftime("%Y-%m-%d %H:%M %Z")
    text = render_markdown(sections, machine, generated, command or latest.get("command", "python -m bench.report"),
                           quick_run_time(results))
    path = docs_dir / "benchmarks.md"
    path.write_text(text)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--docs", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    path = write_report(args.results, args.docs)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
