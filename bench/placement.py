"""3. Placement latency of each policy vs cluster size (offers) and job size (processes).

Goal: a 64-process job against 10,000 offers placed in under 100 ms by every
policy. `place(plan, agents, policy)` is pure, so it is timed alone: the
agents are built once, the clock covers one call.

The job is SINGA's AllReduce shape with N processes (one worker group of N
workers, one server group of N servers, servers and workers together), so
every process hosts a worker and a server slice and talks to every other:
N * (N - 1) / 2 edges in the communication graph, the heaviest input the
network policy sees. Each process asks for 1 CPU and 256 MB; each agent
offers 8 CPUs and 16 GB.
"""

from __future__ import annotations

import gc
import time
from typing import Any

from scylla_singa.jobconf.modelsize import ModelSize
from scylla_singa.jobconf.plan import Demand, JobPlan, PlanOptions, ProcessPlan
from scylla_singa.jobconf.processes import ClusterShape, process_table
from scylla_singa.jobconf.traffic import traffic_edges
from scylla_singa.placement.place import Placed, place
from scylla_singa.placement.policy import builtin_policy_names, load_policy
from scylla_singa.placement.resource_vector import ResourceVector
from scylla_singa.placement.snapshot import AgentView
from .report import Headline, Plot, Section, Series, Table
from .stats import fmt_ratio, fmt_spread, fmt_time, ratio, summarize, verdict

GOAL_S = 0.100
GOAL_OFFERS, GOAL_PROCS = 10000, 64
PARAM_BYTES = 40_000
SIZES = {
    "quick": {"offers": [100, 1000, 10000], "procs": [1, 16, 64, 256], "repeats": 3},
    "full": {"offers": [100, 300, 1000, 3000, 10000], "procs": [1, 4, 16, 64, 128, 256], "repeats": 7},
}


def agents(n: int) -> tuple[AgentView, ...]:
    return tuple(AgentView(f"agent-{i:05d}", f"node{i}", ResourceVector(8, 16384, 0), {}, None) for i in range(n))


def job(nprocs: int) -> JobPlan:
    """SINGA's AllReduce with `nprocs` processes: every process hosts a worker and a server slice."""
    shape = ClusterShape(nworkers_per_group=nprocs, nservers_per_group=nprocs)
    procs = tuple(ProcessPlan(spec, Demand(1.0, 256, 0.0, 0)) for spec in process_table(shape))
    return JobPlan(f"bench-{nprocs}", shape, ModelSize(PARAM_BYTES // 4, 32, 100), procs,
                   traffic_edges(shape, PARAM_BYTES), PlanOptions(steps_per_s=10.0))


def time_place(plan: JobPlan, views: tuple[AgentView, ...], policy, repeats: int) -> tuple[list[float], Any]:
    place(plan, views, policy)  # warm: policy plugins' first-use costs are not placement latency
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        result = place(plan, views, policy)
        times.append(time.perf_counter() - started)
    return times, result


def run(size: str) -> dict[str, Any]:
    cfg = SIZES[size]
    policies = builtin_policy_names()
    points = []
    views = {n: agents(n) for n in cfg["offers"]}
    plans = {n: job(n) for n in cfg["procs"]}
    for name in policies:
        policy = load_policy(name)
        for offers in cfg["offers"]:
            for procs in cfg["procs"]:
                times, result = time_place(plans[procs], views[offers], policy, cfg["repeats"])
                placed = isinstance(result, Placed)
                points.append({"policy": name, "offers": offers, "procs": procs, "place_s": times, "placed": placed,
                               "agents_used": result.agents_used if placed else None,
                               "why": None if placed else result.summary()})
                print(f"  {name:>8} {offers:>6} offers {procs:>4} procs: median "
                      f"{summarize(times).median * 1000:.1f} ms{'' if placed else ' (not placed)'}", flush=True)
    return {"goal_s": GOAL_S, "policies": policies, "offers": cfg["offers"], "procs": cfg["procs"],
            "edges": {n: len(p.edges) for n, p in plans.items()}, "points": points}


def _point(data: dict, policy: str, offers: int, procs: int) -> dict | None:
    return next((p for p in data["points"] if p["policy"] == policy and p["offers"] == offers
                 and p["procs"] == procs), None)


def section(data: dict[str, Any]) -> Section:
    goal = data["goal_s"]
    goal_rows, headline_worst = [], None
    for policy in data["policies"]:
        p = _point(data, policy, GOAL_OFFERS, GOAL_PROCS)
        if p is None:
            continue
        s = summarize(p["place_s"])
        goal_rows.append([policy, fmt_time(s.median), fmt_spread(s),
                          f"{p['agents_used']} agents" if p["placed"] else f"not placed: {p['why']}",
                          "goal: 100 ms", fmt_ratio(ratio(s.median, goal)), verdict(s.median, goal)])
        if headline_worst is None or s.median > headline_worst[1].median:
            headline_worst = (policy, s)
    goal_table = Table(["Policy", "Median", "p10 - p90", "Result", "Anchor", "Ratio (ours / anchor)", "Goal"],
                       goal_rows, caption=f"**A {GOAL_PROCS}-process job against {GOAL_OFFERS:,} offers** "
                                          f"({data['edges'].get(str(GOAL_PROCS), data['edges'].get(GOAL_PROCS))} "
                                          "edges in its communication graph):")
    offers = data["offers"]
    big = max(offers)
    rows = []
    for policy in data["policies"]:
        for procs in data["procs"]:
            cells = []
            for n in offers:
                p = _point(data, policy, n, procs)
                if p is None:
                    cells.append("-")
                    continue
                cell = fmt_time(summarize(p["place_s"]).median)
                cells.append(cell if p["placed"] else f"{cell} (not placed)")
            at_big = _point(data, policy, big, procs)
            r = ratio(summarize(at_big["place_s"]).median, goal) if at_big else None
            rows.append([policy, str(procs), *cells, "100 ms (goal at 64 x 10,000)", fmt_ratio(r)])
    matrix = Table(["Policy", "Processes", *[f"{n:,} offers" for n in offers], "Anchor",
                    f"Ratio at {big:,} offers"], rows,
                   caption="**Every policy, job size and cluster size** (median of the repeats):")
    plots = [
        Plot("bench-placement-offers.png", f"Placement latency of a {GOAL_PROCS}-process job vs offers", "offers",
             "seconds (median, p10-p90 band)",
             [_series(data, pol, "offers", lambda p: p["procs"] == GOAL_PROCS) for pol in data["policies"]],
             logx=True, logy=True, hlines=[(goal, "goal: 100 ms")]),
        Plot("bench-placement-procs.png", f"Placement latency vs job size at {big:,} offers", "processes in the job",
             "seconds (median, p10-p90 band)",
             [_series(data, pol, "procs", lambda p: p["offers"] == big) for pol in data["policies"]],
             logx=True, logy=True, hlines=[(goal, "goal: 100 ms (at 64 processes)")]),
    ]
    headline = []
    if headline_worst:
        policy, s = headline_worst
        over = [r[0] for r in goal_rows if r[-1] == "missed"]
        headline.append(Headline(
            f"3. Placement, {GOAL_PROCS} processes x {GOAL_OFFERS:,} offers (slowest policy: {policy})",
            f"{fmt_time(s.median)} ({fmt_spread(s)})", "goal: 100 ms for every policy",
            fmt_ratio(ratio(s.median, goal)), "< 100 ms",
            "met" if not over else f"missed by {', '.join(over)}"))
    intro = ("`scylla_singa.placement.place(plan, agents, policy)` timed alone for each built-in policy "
             f"({', '.join(data['policies'])}). " + __doc__.split("\n\n", 2)[2].replace("\n", " "))
    notes = []
    slow = [r for r in goal_rows if r[-1] == "missed"]
    for r in slow:
        notes.append(f"**{r[0]} misses the 100 ms goal** ({r[1]} at {GOAL_PROCS} x {GOAL_OFFERS:,}). Its time "
                     "does not depend on the offers: after the greedy passes it runs `refine_cut` "
                     "(placement/refine.py) on the agents in use, whose `_try_swaps` sums edge volumes in "
                     "pure-Python generator expressions (`_local`) for every candidate swap: O(procs^2 x "
                     "degree) Python-level steps, about 3 million at 64 all-to-all processes. An adjacency "
                     "matrix and a vectorised gain computation would remove most of it. Placement code is "
                     "unchanged here, as the issue asks; this is reported to be fixed.")
    at_big = [p for p in data["points"] if p["offers"] == big]
    if at_big:
        worst = max(at_big, key=lambda p: summarize(p["place_s"]).median)
        notes.append(f"Slowest point at {big:,} offers: {worst['policy']} with {worst['procs']} processes, "
                     f"{fmt_time(summarize(worst['place_s']).median)}. The network policy's cost is not monotonic "
                     "in the job size: its local search runs until no move or swap lowers the cut, so it depends "
                     "on how far the greedy passes left it from a local optimum.")
    return Section("placement", "3. Placement latency", intro, [goal_table, matrix], plots, notes, headline)


def _series(data: dict, policy: str, axis: str, keep) -> Series:
    pts = sorted((p for p in data["points"] if p["policy"] == policy and keep(p)), key=lambda p: p[axis])
    sums = [summarize(p["place_s"]) for p in pts]
    return Series(policy, [p[axis] for p in pts], [s.median for s in sums], [s.p10 for s in sums],
                  [s.p90 for s in sums])
