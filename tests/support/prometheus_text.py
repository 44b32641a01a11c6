"""Our /metrics text, read with Prometheus's own parser (prometheus-client), not one written here.

`parse_exposition(text)` returns the metric families by name. prometheus-client
names a counter's family without its `_total` suffix; the families are kept
under that name and under the name we render (`x_total`) too. On top of
the parser, two rules of the text format it does not enforce: the text
ends with a newline, and a family is announced once (its lines are
contiguous) with no sample repeated.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass
class Family:
    """One parsed metric family: its kind, help text and samples."""

    name: str
    kind: str
    help: str
    samples: list[tuple[dict[str, str], float]]

    def value(self, **labels: str) -> float:
        """The value of the sample with exactly these labels (KeyError naming them if there is none)."""
        for got, value in self.samples:
            if got == labels:
                return value
        raise KeyError(f"{self.name} has no sample {labels}; it has {[s for s, _ in self.samples]}")

    def values(self) -> list[tuple[dict[str, str], float]]:
        return list(self.samples)


def parse_exposition(text: str) -> dict[str, Family]:
    """Families by name; AssertionError (or the parser's ValueError) where the text breaks the format."""
    assert text.endswith("\n"), "the exposition must end with a newline"
    families: dict[str, Family] = {}
    for parsed in text_string_to_metric_families(text):
        assert parsed.name not in families, f"family {parsed.name} is announced twice or split"
        keys = [(s.name, tuple(sorted(s.labels.items()))) for s in parsed.samples]
        assert len(keys) == len(set(keys)), f"a sample of {parsed.name} repeats: {keys}"
        family = Family(parsed.name, parsed.type, parsed.documentation,
                        [(dict(s.labels), s.value) for s in parsed.samples])
        families[parsed.name] = family
        if parsed.type == "counter":
            families[parsed.name + "_total"] = family
    return families
