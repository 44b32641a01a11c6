"""yamlmarks' event pre-pass: what it refuses, and that real policy shapes pass it untouched."""

from __future__ import annotations

import pytest

from scylla_singa.jobconf.user_files import byte_position, format_size
from scylla_singa.placement.policy import PolicyError, parse_policy
from scylla_singa.placement.yamlmarks import YamlRefusal, load_with_marks

# Mappings inside mappings, lists of mappings, keys after nested values, flow and block style:
# the key/value bookkeeping of the pre-pass must let all of it through.
NESTED_POLICY = """\
name: nested
description: "keys after nested values"
filters:
  - resources-fit
  - {name: max-procs-per-agent, args: {max: 2}}
scores:
  - name: spread
    weight: 10
  - {name: least-allocated, weight: 1}
constraints:
  attributes: {match: {rack: r1}, exclude: {zone: [b, c]}}
  hostnames:
    include: ["node*"]
    exclude: [node3]
order: largest-first
"""


def test_nested_mappings_and_lists_pass_the_pre_pass() -> None:
    policy = parse_policy(NESTED_POLICY, "n.yaml")
    assert policy.order == "largest-first" and len(policy.scores) == 2
    data, marks = load_with_marks(NESTED_POLICY)
    assert data["constraints"]["attributes"]["exclude"] == {"zone": ["b", "c"]}
    assert marks[("order",)] == (15, 8)


@pytest.mark.parametrize("text, where, fragment", [
    ("a: &x 1\nb: *x\n", (2, 4), "an alias (*x)"),
    ("? [a]\n: 1\n", (1, 3), "a mapping key must be a plain value"),
    ("a:\n  ? {b: 1}\n  : 2\n", (2, 5), "a mapping key must be a plain value"),
    ("a: " + "[" * 40 + "]" * 40, (1, 35), "nested more than 32 levels deep"),
    ("a: !!int x\n", (1, 4), "cannot read the value 'x'"),
], ids=["alias", "list-key", "nested-map-key", "deep", "bad-tag"])
def test_the_pre_pass_refuses_at_the_offending_spot(text: str, where: tuple[int, int], fragment: str) -> None:
    with pytest.raises(YamlRefusal) as info:
        load_with_marks(text)
    assert (info.value.line, info.value.col) == where and fragment in info.value.message


def test_a_refusal_becomes_a_positioned_policy_error() -> None:
    with pytest.raises(PolicyError) as info:
        parse_policy("name: a\nfilters: &f [resources-fit]\nscores: *f\n", "p.yaml")
    assert str(info.value).startswith("p.yaml:3:9: an alias (*f)")


def test_byte_positions_count_characters_on_the_line() -> None:
    data = "ab\nçé\xff".encode("utf-8")  # the 0xc3 0xbf of ÿ: valid; make a bad byte after two 2-byte chars
    bad = data.replace("ÿ".encode(), b"\xff")
    assert byte_position(bad, bad.index(b"\xff")) == (2, 3)
    assert (format_size(128 * 1024), format_size(1024 * 1024), format_size(1000)) == ("128 KiB", "1 MiB", "1000 bytes")
