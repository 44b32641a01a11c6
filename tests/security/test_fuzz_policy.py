"""Fuzzing policy files: every mutated or generated policy loads, or is refused as FILE:LINE:COL, within a second.

Attack: a policy YAML crafted (or mangled) to crash `scylla-singa run
--policy FILE` with a traceback or hang it: non-UTF-8 bytes, broken YAML,
a billion-laughs alias bomb, nesting thousands deep, a list or a mapping as
a mapping key, dates and integers YAML cannot build, wrong types anywhere,
a `starts` cycle. Each input must either load or be refused with a
PolicyError whose str() is `PATH:LINE:COL: message`, within a second.

Seeds: the built-in policies (policies/*.yaml). derandomize=True makes CI
reproducible.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scylla_singa.placement.policy import PolicyError, builtin_policy_dir, load_policy
from tests.security.mutations import Outcomes, mutated

# Each parse+plan must cost under a second of this process's CPU. CPU time, not wall time, is asserted:
# the machines this runs on are shared, and a busy neighbour must not fail it, while every blow-up
# the audit found (a 32 s plan, a 60 s alias bomb) is CPU. Wall time is measured too and reported.
BUDGET_S = 1.0
# SCYLLA_FUZZ_EXAMPLES=5000 for a longer run by hand; CI keeps 300 (a few seconds).
# The deadline (wall clock) is only a backstop for a hang; the budget above is what each input is held to.
FUZZ = settings(max_examples=int(os.environ.get("SCYLLA_FUZZ_EXAMPLES", "300")), derandomize=True,
                database=None, deadline=10_000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def corpus() -> list[bytes]:
    policies = [p.read_bytes() for p in sorted(builtin_policy_dir().glob("*.yaml"))]
    assert len(policies) >= 4, f"too few built-in policies: {len(policies)}"
    return policies


def test_mutated_policies_load_or_are_refused_with_a_position(tmp_path: Path) -> None:
    """Attack: byte, line and token mutations of the built-in policies (non-UTF-8, aliases, tags, brackets...)."""
    outcomes = Outcomes(tmp_path / "policy.yaml", lambda path: load_policy(str(path)), PolicyError, "loaded", BUDGET_S)

    @FUZZ
    @given(mutated(corpus()))
    def one(data: bytes) -> None:
        outcomes.check(data)

    one()
    outcomes.report("mutated policies")
    assert outcomes.counts["loaded"] > 0 and outcomes.counts["refused"] > 0


def billion_laughs(levels: int) -> str:
    """The alias bomb: each level a list of ten aliases of the level before (10**levels strings)."""
    lines = ['a0: &a0 ["lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "name: bomb\nfilters: [resources-fit]\n" + "\n".join(lines) + "\n"


_SCALARS = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                     st.none(), st.text(max_size=8), st.sampled_from(("2024-13-45", "1" * 5000, "!!binary x",
                                                                      "!!python/object:os.system", "0o99")))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(("name", "weight", "args", "match", "exclude", "include", "min_mbps", "x")), inner, max_size=3),
    max_leaves=8)
_TOP = ("name", "description", "order", "filters", "scores", "constraints", "refine", "starts")


@st.composite
def structures(draw: st.DrawFn) -> bytes:
    """A policy of generated parts (any YAML value under any top key), or a hostile shape:
    an alias bomb, nesting up to 100,000 deep, a list or mapping as a key, a `starts` cycle."""
    kind = draw(st.sampled_from(("values", "bomb", "deep-list", "deep-map", "list-key", "map-key", "cycle")))
    if kind == "values":
        import yaml
        doc = {"name": "fuzz", "filters": ["resources-fit"]}
        doc.update(draw(st.dictionaries(st.sampled_from(_TOP), _VALUES, max_size=4)))
        text = yaml.safe_dump(doc, allow_unicode=True)
        for raw in draw(st.lists(st.sampled_from(("!!binary x", "2024-13-45", "1" * 5000, "!!set {a}")), max_size=1)):
            text = text.replace("name: fuzz", f"name: fuzz\ndescription: {raw}")
        return text.encode()
    if kind == "bomb":
        return billion_laughs(draw(st.integers(3, 12))).encode()
    depth = draw(st.sampled_from((40, 1000, 100_000)))
    if kind == "deep-list":
        return ("name: deep\nfilters: " + "[" * depth + "]" * depth + "\n").encode()
    if kind == "deep-map":
        return ("name: deep\nconstraints: " + "{a: " * depth + "1" + "}" * depth + "\n").encode()
    if kind == "list-key":
        return b"name: k\nfilters: [resources-fit]\n? [a, b]\n: 1\n"
    if kind == "map-key":
        return b"name: k\nfilters: [resources-fit]\n{a: 1}: 2\n"
    return b"name: cycle\nfilters: [resources-fit]\nstarts: [policy.yaml]\n"


def test_generated_and_hostile_policies_load_or_are_refused_quickly(tmp_path: Path, monkeypatch) -> None:
    """Attack: alias bombs (10**12 expansions), nesting 100,000 deep, non-scalar keys, wrong types, cycles."""
    monkeypatch.chdir(tmp_path)  # `starts: [policy.yaml]` names the file itself
    outcomes = Outcomes(tmp_path / "policy.yaml", lambda path: load_policy(str(path)), PolicyError, "loaded", BUDGET_S)

    @FUZZ
    @given(structures())
    def one(data: bytes) -> None:
        outcomes.check(data)

    one()
    outcomes.report("generated policies")
    assert outcomes.counts["refused"] > 0
