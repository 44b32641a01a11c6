"""The hand-written Prometheus exposition: format details, and what Prometheus's own parser reads of it."""

from __future__ import annotations

import math

import pytest

from scylla_singa.ui.prometheus import CONTENT_TYPE, Metric, escape_label, format_value, render
from tests.support.prometheus_text import parse_exposition


@pytest.mark.parametrize("value, text", [
    (0, "0"), (3, "3"), (3.0, "3"), (-2.0, "-2"), (0.25, "0.25"), (1e-06, "1e-06"), (1e20, "1e+20"),
    (math.nan, "NaN"), (math.inf, "+Inf"), (-math.inf, "-Inf"), (True, "1"),
], ids=lambda x: repr(x))
def test_values_are_spelled_as_the_format_wants(value, text) -> None:
    assert format_value(value) == text


@pytest.mark.parametrize("raw, escaped", [
    ("plain", "plain"), ('say "hi"', 'say \\"hi\\"'), ("a\\b", "a\\\\b"), ("two\nlines", "two\\nlines"),
], ids=["plain", "quotes", "backslash", "newline"])
def test_label_values_are_escaped(raw, escaped) -> None:
    assert escape_label(raw) == escaped


def test_a_family_renders_help_type_and_labelled_samples() -> None:
    text = render([Metric("scylla_jobs", "gauge", "Jobs by state.").add(2, state="RUNNING").add(0, state="FAILED")])
    assert text == ('# HELP scylla_jobs Jobs by state.\n# TYPE scylla_jobs gauge\n'
                    'scylla_jobs{state="RUNNING"} 2\nscylla_jobs{state="FAILED"} 0\n')


def test_tricky_label_values_survive_prometheus_parser() -> None:
    nasty = 'job "x"\\ with\nnewline'
    text = render([Metric("m_total", "counter", "Help with \\ and\nnewline.").add(1.5, job=nasty, other="")])
    fam = parse_exposition(text)["m_total"]
    assert fam.kind == "counter" and fam.help == "Help with \\ and\nnewline."
    assert fam.value(job=nasty, other="") == 1.5


def test_a_family_without_samples_still_announces_itself() -> None:
    fams = parse_exposition(render([Metric("empty", "gauge", "Nothing yet.")]))
    assert fams["empty"].kind == "gauge" and fams["empty"].samples == []


@pytest.mark.parametrize("build, message", [
    (lambda: Metric("1bad", "gauge", "x"), "invalid metric name"),
    (lambda: Metric("ok", "histogram", "x"), "metric kind"),
    (lambda: render([Metric("ok", "gauge", "x").add(1, **{"bad-label": "v"})]), "invalid label name"),
    (lambda: render([Metric("ok", "gauge", "x").add(1, __reserved="v")]), "invalid label name"),
    (lambda: render([Metric("ok", "gauge", "x"), Metric("ok", "gauge", "y")]), "rendered twice"),
], ids=["name", "kind", "label-name", "reserved-label", "duplicate-family"])
def test_what_the_format_forbids_is_refused(build, message) -> None:
    with pytest.raises(ValueError, match=message):
        build()


def test_content_type_is_the_text_format_0_0_4() -> None:
    assert CONTENT_TYPE.startswith("text/plain; version=0.0.4")


@pytest.mark.parametrize("text", [
    "m 1",                                                   # no final newline
    "# TYPE m gauge\nm{a=\"1\"} 1\nm{a=\"1\"} 2\n",          # repeated sample
    "# TYPE m gauge\nm{a=1} 1\n",                            # unquoted label value
    "# TYPE m gauge\nm 1\n# TYPE n gauge\nn 1\nm 2\n",       # family split
    "# TYPE m gauge\nm one\n",                               # not a number
], ids=["no-newline", "repeat", "unquoted", "split", "nan-text"])
def test_the_metrics_check_rejects_broken_expositions(text) -> None:
    with pytest.raises((AssertionError, ValueError)):
        parse_exposition(text)
