"""The benchmarks' statistics and number formatting (pure helpers; no benchmark runs here)."""

from __future__ import annotations

import pytest

from bench.stats import fmt_num, fmt_ratio, fmt_spread, fmt_time, percentile, ratio, summarize, summary_from, verdict


@pytest.mark.parametrize("samples, q, want", [
    pytest.param([5.0], 50, 5.0, id="one-sample"),
    pytest.param([1, 2, 3, 4], 50, 2.5, id="median-interpolates"),
    pytest.param([4, 1, 3, 2], 0, 1.0, id="unsorted-min"),
    pytest.param([4, 1, 3, 2], 100, 4.0, id="unsorted-max"),
    pytest.param(list(range(11)), 10, 1.0, id="p10-on-a-rank"),
    pytest.param([0, 10], 25, 2.5, id="linear-between-two"),
])
def test_percentile_interpolates_like_numpy(samples, q, want) -> None:
    assert percentile(samples, q) == pytest.approx(want)


@pytest.mark.parametrize("samples, q", [([], 50), ([1.0], -1), ([1.0], 101)], ids=["empty", "below-0", "above-100"])
def test_percentile_refuses_nonsense(samples, q) -> None:
    with pytest.raises(ValueError):
        percentile(samples, q)


def test_summary_has_median_spread_and_round_trips_through_json() -> None:
    s = summarize([3, 1, 2, 5, 4])
    assert (s.n, s.median, s.min, s.max, s.mean) == (5, 3.0, 1.0, 5.0, 3.0)
    assert s.p10 == pytest.approx(1.4) and s.p90 == pytest.approx(4.6)
    assert s.iqr == pytest.approx(2.0)
    assert summary_from(s.to_dict()) == s
    assert s.scaled(1000).median == 3000.0


def test_summary_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        summarize([])


@pytest.mark.parametrize("ours, anchor, want", [
    pytest.param(0.5, 1.0, 0.5, id="half"), pytest.param(None, 1.0, None, id="no-value"),
    pytest.param(1.0, None, None, id="no-anchor"), pytest.param(1.0, 0.0, None, id="zero-anchor"),
])
def test_ratio(ours, anchor, want) -> None:
    assert ratio(ours, anchor) == want


@pytest.mark.parametrize("value, want", [
    (None, "-"), (0.4234, "0.42x"), (1.0, "1.00x"), (12.34, "12.3x"), (456.7, "457x")])
def test_fmt_ratio(value, want) -> None:
    assert fmt_ratio(value) == want


@pytest.mark.parametrize("seconds, want", [
    (None, "-"), (12.3e-6, "12.3 us"), (0.00456, "4.56 ms"), (0.1, "100 ms"), (1.234, "1.23 s"), (75.0, "75.0 s")])
def test_fmt_time_picks_the_unit(seconds, want) -> None:
    assert fmt_time(seconds) == want


@pytest.mark.parametrize("x, want", [(0, "0"), (1234567.0, "1,234,567"), (0.0123456, "0.0123"), (None, "-"),
                                     (float("nan"), "-")])
def test_fmt_num_three_significant_digits(x, want) -> None:
    assert fmt_num(x) == want


def test_fmt_spread_is_p10_to_p90() -> None:
    assert fmt_spread(summarize([0.001, 0.002, 0.003])) == "1.20 ms - 2.80 ms"


@pytest.mark.parametrize("value, goal, lower, want", [
    (0.9, 1.0, True, "met"), (1.1, 1.0, True, "missed"), (1.1, 1.0, False, "met"), (None, 1.0, True, "-")])
def test_verdict(value, goal, lower, want) -> None:
    assert verdict(value, goal, lower_is_better=lower) == want


def test_results_are_compacted_to_six_significant_digits() -> None:
    from bench.run import compact
    assert compact({"a": [1.23456789, {"b": 1234567.891}], "c": "x", "d": 3}) == \
        {"a": [1.23457, {"b": 1234570.0}], "c": "x", "d": 3}
