"""Fuzzing job.conf: every mutated or generated file is planned, or refused as FILE:LINE:COL, within a second.

Attack: a job.conf crafted (or mangled) to make `scylla-singa plan`/`run`
crash with a traceback, run for minutes or eat the machine's memory: non-UTF-8
bytes, broken syntax, counts of a hundred million, NaN or negative counts,
nesting thousands deep, a file of many megabytes. Each input must either plan
or be refused with a JobConfError whose str() is `PATH:LINE:COL: message`,
and reading plus planning must take under a second.

Seeds: this repository's example confs, the unit tests' confs and Apache
SINGA 0.3.0's own example confs. derandomize=True makes CI reproducible.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scylla_singa.jobconf.errors import JobConfError
from scylla_singa.jobconf.parse import load_job
from scylla_singa.jobconf.plan import plan_job
from tests.security.mutations import Outcomes, mutated
from tests.unit.singa_source import singa_files

REPO = Path(__file__).resolve().parents[2]
SEEDS = sorted({*REPO.glob("examples/**/*.conf"), *REPO.glob("tests/unit/confs/*.conf")})
# Each parse+plan must cost under a second of this process's CPU. CPU time, not wall time, is asserted:
# the machines this runs on are shared, and a busy neighbour must not fail it, while every blow-up
# the audit found (a 32 s plan, a 60 s alias bomb) is CPU. Wall time is measured too and reported.
BUDGET_S = 1.0
# SCYLLA_FUZZ_EXAMPLES=5000 for a longer run by hand; CI keeps 300 (a few seconds).
# The deadline (wall clock) is only a backstop for a hang; the budget above is what each input is held to.
FUZZ = settings(max_examples=int(os.environ.get("SCYLLA_FUZZ_EXAMPLES", "300")), derandomize=True,
                database=None, deadline=10_000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CLUSTER_FIELDS = ("nworker_groups", "nserver_groups", "nworkers_per_group", "nservers_per_group",
                  "nworkers_per_procs", "nservers_per_procs", "sync_freq", "start_port")


def _plan(path: Path) -> None:
    plan_job(load_job(path))


def corpus() -> list[bytes]:
    confs = [p.read_bytes() for p in SEEDS]
    confs += list(singa_files("examples", ".conf").values())
    assert len(confs) >= 20, f"too few seed confs: {len(confs)}"
    return confs


def test_mutated_confs_plan_or_are_refused_with_a_position(tmp_path: Path) -> None:
    """Attack: byte, line and token mutations of real confs (non-UTF-8, NaN, 1e8, unclosed braces...)."""
    outcomes = Outcomes(tmp_path / "job.conf", _plan, JobConfError, "planned", BUDGET_S)

    @FUZZ
    @given(mutated(corpus()))
    def one(data: bytes) -> None:
        outcomes.check(data)

    one()
    outcomes.report("mutated job.confs")
    assert outcomes.counts["planned"] > 0 and outcomes.counts["refused"] > 0


_VALUES = st.one_of(st.integers(-2**63, 2**64), st.sampled_from(("nan", "inf", "-inf", "1e8", "1e400", "0x10", '"4"',
                                                                   "true", "-0", "1.0")))


@st.composite
def cluster_sections(draw: st.DrawFn) -> bytes:
    """The digits conf with a generated cluster section: any integer, or a non-integer, in any count field."""
    base = (REPO / "examples/digits-mlp/job.conf").read_text()
    fields = draw(st.lists(st.sampled_from(CLUSTER_FIELDS), max_size=5, unique=True))
    lines = [f"  {f}: {draw(st.integers(1, 2**31) | _VALUES)}" for f in fields]
    if draw(st.booleans()):
        lines.append(f"  server_worker_separate: {draw(st.sampled_from(('true', 'false', '2', 'nan')))}")
    section = "cluster {\n" + "\n".join(lines) + "\n}\n"
    return (base[:base.index("cluster {")] + section).encode()


@st.composite
def nested(draw: st.DrawFn) -> bytes:
    """Deep nesting: an extension block, a layer's sub-message or bare braces, 10 to 100,000 levels."""
    depth = draw(st.sampled_from((10, 100, 1000, 10_000, 100_000)))
    opener = draw(st.sampled_from(("[ext] { ", "a { ", "{ ", "neuralnet { ", "a < ", "[a] < ")))
    base = (REPO / "examples/digits-mlp/job.conf").read_text()
    return (base + opener * depth + "}" * draw(st.sampled_from((0, depth)))).encode()


def test_generated_shapes_and_nesting_plan_or_are_refused_quickly(tmp_path: Path) -> None:
    """Attack: cluster counts from 1 to 2**64 (and NaN, inf, hex, strings), nesting up to 100,000 deep."""
    outcomes = Outcomes(tmp_path / "job.conf", _plan, JobConfError, "planned", BUDGET_S)

    @FUZZ
    @given(cluster_sections() | nested())
    def one(data: bytes) -> None:
        outcomes.check(data)

    one()
    outcomes.report("generated job.confs")
    assert outcomes.counts["refused"] > 0
