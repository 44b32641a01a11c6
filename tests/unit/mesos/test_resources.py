"""Resources: Mesos text and JSON forms, arithmetic, containment; attributes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.mesos.api.resources import ResourceError, Resources, attributes_dict, parse_attributes


@pytest.mark.parametrize("text,scalars,ranges,sets", [
    ("cpus:4;mem:8192", {"cpus": 4, "mem": 8192}, {}, {}),
    ("cpus:0.5; mem:32 ;net_bw:1000", {"cpus": 0.5, "mem": 32, "net_bw": 1000}, {}, {}),
    ("ports:[31000-32000]", {}, {"ports": ((31000, 32000),)}, {}),
    ("ports:[1-2, 4-5,3-3]", {}, {"ports": ((1, 5),)}, {}),
    ("gpus_ids:{a,b}", {}, {}, {"gpus_ids": frozenset({"a", "b"})}),
    ("cpus(*):2", {"cpus": 2}, {}, {}),
], ids=["scalars", "spaces-and-custom", "ranges", "ranges-merge", "set", "role-suffix"])
def test_parse_text(text, scalars, ranges, sets) -> None:
    r = Resources.parse(text)
    assert (r.scalars, r.ranges, r.sets) == (scalars, ranges, sets)


@pytest.mark.parametrize("text", ["cpus", "cpus:x", "ports:[5-1]", "ports:[a-b]"],
                         ids=["no-value", "not-a-number", "reversed-range", "bad-range"])
def test_bad_text_raises(text) -> None:
    with pytest.raises(ResourceError):
        Resources.parse(text)


def test_json_round_trip_and_shape() -> None:
    r = Resources.parse("cpus:2;mem:64;ports:[31000-31002];ids:{x}")
    js = r.to_json()
    assert js[0] == {"name": "cpus", "type": "SCALAR", "scalar": {"value": 2.0}, "role": "*"}
    assert {"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": 31000, "end": 31002}]},
            "role": "*"} in js
    assert Resources.from_json(js) == r


@pytest.mark.parametrize("bad", [[{"type": "SCALAR"}], [{"name": "cpus", "type": "SCALAR"}],
                                 [{"name": "cpus", "type": "TEXT", "text": {}}],
                                 [{"name": "cpus", "type": "SCALAR", "scalar": {"value": -1}}]],
                         ids=["no-name", "no-scalar", "unknown-type", "negative"])
def test_bad_json_raises(bad) -> None:
    with pytest.raises(ResourceError):
        Resources.from_json(bad)


def test_arithmetic_and_containment() -> None:
    a = Resources.parse("cpus:4;mem:1024;ports:[31000-31010]")
    b = Resources.parse("cpus:1.5;mem:1024;ports:[31002-31003]")
    left = a - b
    assert left == Resources.parse("cpus:2.5;ports:[31000-31001,31004-31010]")
    assert a.contains(b) and not b.contains(a) and left + b == a
    assert not Resources.parse("cpus:0.005").allocatable() and Resources.parse("mem:32").allocatable()
    assert Resources.parse("cpus:0.1").scalar("cpus") == 0.1 and (a - a).is_empty()


scalars = st.dictionaries(st.sampled_from(["cpus", "mem", "disk", "net_bw"]),
                          st.floats(min_value=0, max_value=1e6, allow_nan=False), max_size=4)


@given(scalars, scalars)
def test_add_then_subtract_gives_back_the_first(x, y) -> None:
    a, b = Resources(x), Resources(y)
    assert ((a + b) - b).contains(a) and a.contains((a + b) - b) or all(
        abs(((a + b) - b).scalar(k) - a.scalar(k)) < 1e-2 for k in x)
    assert (a + b).contains(a) and (a + b).contains(b)


def test_attributes_text_and_scalar() -> None:
    attrs = parse_attributes("rack:r1;zone:a;speed:2.5")
    assert attrs[0] == {"name": "rack", "type": "TEXT", "text": {"value": "r1"}}
    assert attrs[2] == {"name": "speed", "type": "SCALAR", "scalar": {"value": 2.5}}
    assert attributes_dict(attrs) == {"rack": "r1", "zone": "a", "speed": 2.5}
    with pytest.raises(ResourceError):
        parse_attributes("novalue")


_AMOUNTS = st.floats(min_value=-5.0, max_value=1e6, allow_nan=False, allow_infinity=False)
_SCALARS = st.dictionaries(st.sampled_from(["cpus", "mem", "disk", "gpus", "cpus(ml)"]), _AMOUNTS, max_size=5)


@settings(max_examples=300, deadline=None)
@given(a=_SCALARS, b=_SCALARS)
def test_scalar_only_algebra_is_what_the_constructor_makes_of_the_sums(a, b) -> None:
    """The scalars-only shortcut of + and - gives exactly what building from the sums gives (issue 17)."""
    x, y = Resources(a), Resources(b)
    summed = dict(x.scalars)
    for k, v in y.scalars.items():
        summed[k] = summed.get(k, 0.0) + v
    assert (x + y).scalars == Resources(summed).scalars
    assert (x - y).scalars == Resources({k: v - y.scalars.get(k, 0.0) for k, v in x.scalars.items()}).scalars
    for r in (x + y, x - y, Resources()):
        assert r.ranges == {} and r.sets == {} and all(v > 0 for v in r.scalars.values())


_RANGES = st.dictionaries(st.sampled_from(["ports", "ephemeral_ports"]),
                          st.lists(st.tuples(st.integers(0, 60), st.integers(0, 8)).map(lambda t: (t[0], t[0] + t[1])),
                                   max_size=4), max_size=2)
_SETS = st.dictionaries(st.sampled_from(["gpus_ids", "cores"]), st.sets(st.sampled_from("abcdef"), max_size=4),
                        max_size=2)


def _by_constructor(x: Resources, y: Resources, sign: int) -> Resources:
    """What + (sign 1) and - (sign -1) gave when they built every result through the constructor."""
    if sign > 0:
        return Resources({k: x.scalars.get(k, 0.0) + y.scalars.get(k, 0.0) for k in {*x.scalars, *y.scalars}},
                         {k: [*x.ranges.get(k, ()), *y.ranges.get(k, ())] for k in {*x.ranges, *y.ranges}},
                         {k: x.sets.get(k, frozenset()) | y.sets.get(k, frozenset()) for k in {*x.sets, *y.sets}})
    left = {k: [(b, e) for b, e in v] for k, v in x.ranges.items()}
    for k, take in y.ranges.items():   # subtract point by point: slow and plainly right
        if k in left:
            points = {p for b, e in left[k] for p in range(b, e + 1)} - {p for b, e in take for p in range(b, e + 1)}
            left[k] = [(p, p) for p in points]
    return Resources({k: v - y.scalars.get(k, 0.0) for k, v in x.scalars.items()}, left,
                     {k: v - y.sets.get(k, frozenset()) for k, v in x.sets.items()})


@settings(max_examples=400, deadline=None)
@given(a=_SCALARS, b=_SCALARS, ra=_RANGES, rb=_RANGES, sa=_SETS, sb=_SETS)
def test_algebra_with_ranges_and_sets_is_what_the_constructor_makes(a, b, ra, rb, sa, sb) -> None:
    """+ and - build their results without the constructor (issue 17): the same value, merged ranges, no
    empty part, and neither operand changed."""
    x, y = Resources(a, ra, sa), Resources(b, rb, sb)
    before = (str(x), str(y))
    for sign, got in ((1, x + y), (-1, x - y)):
        want = _by_constructor(x, y, sign)
        assert (got.scalars, got.ranges, got.sets) == (want.scalars, want.ranges, want.sets)
        assert all(v for v in got.ranges.values()) and all(v for v in got.sets.values())
    assert (str(x), str(y)) == before
    assert (x + y).contains(x) and (x + y).contains(y)
