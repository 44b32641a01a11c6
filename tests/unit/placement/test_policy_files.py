"""Policy YAML: every mistake is reported with FILE:LINE:COL and what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.placement.plugins.scores import Spread
from scylla_singa.placement.policy import PolicyError, load_policy, parse_policy
from scylla_singa.placement.registry import Registry


@pytest.mark.parametrize("text, line, col, fragment", [
    pytest.param("name: x\nfilters: [resources-fit]\nsocres: [spread]\n", 3, 1, "unknown key 'socres'", id="typo-key"),
    pytest.param("name: x\nfilters: [resources-fit]\nscores:\n  - {name: spred}\n", 4, 12, "'spred' is unknown",
                 id="unknown-plugin"),
    pytest.param("name: x\nfilters: [resources-fit, spread]\n", 2, 26, "'spread' is a score plugin", id="wrong-kind"),
    pytest.param("name: x\nfilters: [resources-fit]\nscores:\n  - {name: spread, weight: -1}\n", 4, 28,
                 "weight must be a number >= 0", id="negative-weight"),
    pytest.param("name: x\nfilters:\n  - {name: max-procs-per-agent, args: {max: 0}}\n  - resources-fit\n", 3, 39,
                 "max must be a positive integer", id="bad-arg-value"),
    pytest.param("name: x\nfilters:\n  - {name: resources-fit, args: {foo: 1}}\n", 3, 33, "has no argument 'foo'",
                 id="unknown-arg"),
    pytest.param("name: x\norder: random\nfilters: [resources-fit]\n", 2, 8, "order must be one of", id="bad-order"),
    pytest.param("name: x\nscores: [spread]\n", 1, 1, "list resources-fit", id="no-resource-filter"),
    pytest.param("name: x\nfilters: [resources-fit]\nconstraints:\n  rack: r1\n", 4, 3, "unknown constraint 'rack'",
                 id="unknown-constraint"),
    pytest.param("name: x\nfilters: [resources-fit\n", 3, 1, "not valid YAML", id="yaml-syntax"),
    pytest.param("- a\n- b\n", 1, 1, "a policy is a mapping", id="not-a-mapping"),
])
def test_policy_errors_are_positioned(text: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy(text, "p.yaml")
    err = info.value
    assert fragment in err.message
    assert (err.path, err.line, err.col) == ("p.yaml", line, col), str(err)
    assert str(err).startswith(f"p.yaml:{line}:{col}: ")


def test_load_by_name_and_by_path(tmp_path: Path) -> None:
    assert load_policy("pack").name == "pack"
    f = tmp_path / "mine.yaml"
    f.write_text("name: mine\nfilters: [resources-fit]\nscores: [{name: pack, weight: 2}]\n")
    policy = load_policy(str(f))
    assert policy.name == "mine" and policy.scores[0][1] == 2.0


def test_unknown_policy_name_lists_the_builtins() -> None:
    with pytest.raises(PolicyError) as info:
        load_policy("fastest")
    assert "built-in: network, pack, singa11, spread" in str(info.value)


def test_constraint_filters_run_first_so_they_explain_rejections() -> None:
    policy = parse_policy("name: x\nfilters: [resources-fit]\nconstraints:\n  hostnames: {exclude: [a]}\n")
    assert [f.name for f in policy.filters] == ["hostnames", "resources-fit"]


def test_registry_refuses_duplicates() -> None:
    registry = Registry()
    registry.register(Spread)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(Spread)
