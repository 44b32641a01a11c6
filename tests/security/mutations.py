"""Hypothesis strategies that mutate a user-written text file the ways an attacker or a typo would.

Byte mutations (any byte, so non-UTF-8 too), line mutations (delete,
duplicate, swap, repeat many times) and token mutations (a number, a name
or a bracket replaced by a nasty one: huge, negative, NaN, infinity, an
unclosed brace...). Each strategy draws a seed text from the given corpus
and applies one to four mutations, so most inputs stay close enough to a
real file to reach the checks after parsing.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

# Values that have broken parsers and planners: sizes, signs, non-numbers, overflow, brackets, quotes.
NASTY_TOKENS = (
    "0", "-1", "1000000", "100000000", "1e8", "1e400", "-1e400", "nan", "NaN", "inf", "-inf", "Infinity",
    "2147483647", "2147483648", "-2147483649", "18446744073709551616", "9" * 5000, "0x7fffffff", "1.5", "0.0001",
    '"x"', '""', "'", '"', "{", "}", "[", "]", "<", ">", ":", ",", ";", "#", "\\", "\x00", "\t", "\ufeff", "ä",
    "true", "false", "null", "~", "kNone", "kBP", "[x]", "[a.b] {", "&a", "*a", "? [x]", "!!python/object:os.system",
    "!!binary", "2024-13-45", "- ", "{a: 1}", "[[[[", "]]]]",
)
_TOKEN = re.compile(r"[-+]?\d[\w.+-]*|[A-Za-z_][\w.]*|\S")


@st.composite
def mutated(draw: st.DrawFn, corpus: list[bytes]) -> bytes:
    """One seed of `corpus` with 1-4 byte, line or token mutations."""
    data = draw(st.sampled_from(corpus))
    for _ in range(draw(st.integers(1, 4))):
        data = draw(st.sampled_from((_byte_mutation, _line_mutation, _token_mutation)))(draw, data)
    return data


def _byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    at = draw(st.integers(0, len(data)))
    new = draw(st.binary(min_size=0, max_size=4))
    drop = draw(st.integers(0, 4))
    return data[:at] + new + data[at + drop:]


def _line_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    lines = data.split(b"\n")
    i = draw(st.integers(0, len(lines) - 1))
    op = draw(st.sampled_from(("delete", "duplicate", "swap", "repeat")))
    if op == "delete":
        del lines[i]
    elif op == "duplicate":
        lines.insert(i, lines[i])
    elif op == "swap":
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i:i + 1] = [lines[i]] * draw(st.sampled_from((10, 100, 1000)))
    return b"\n".join(lines)


def _token_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    text = data.decode("utf-8", errors="surrogateescape")
    tokens = list(_TOKEN.finditer(text))
    if not tokens:
        return data
    token = draw(st.sampled_from(tokens))
    new = draw(st.sampled_from(NASTY_TOKENS) | st.sampled_from([t.group() for t in tokens]))
    text = text[:token.start()] + new + text[token.end():]
    return text.encode("utf-8", errors="surrogateescape")



class Outcomes:
    """Runs `read` on each input written to `path`: it must accept it (`accepted` counts) or refuse it with
    `refusal` saying FILE:LINE:COL, within `budget_s` of CPU. Counts what the fuzzer saw, for the report."""

    def __init__(self, path: Path, read: Callable[[Path], object], refusal: type[Exception], accepted: str,
                 budget_s: float = 1.0) -> None:
        self.path, self.read, self.refusal, self.accepted, self.budget_s = path, read, refusal, accepted, budget_s
        self.counts: Counter[str] = Counter()
        self.slowest_cpu, self.slowest_wall = (0.0, b""), 0.0

    def check(self, data: bytes) -> None:
        self.path.write_bytes(data)
        start, start_cpu = time.monotonic(), time.process_time()
        try:
            self.read(self.path)
            self.counts[self.accepted] += 1
        except self.refusal as exc:
            self.counts["refused"] += 1
            assert re.match(rf"^{re.escape(str(self.path))}:\d+:\d+: \S", str(exc)), \
                f"refusal without FILE:LINE:COL: {str(exc)[:300]!r} for input {data[:300]!r}"
        cpu, wall = time.process_time() - start_cpu, time.monotonic() - start
        self.slowest_cpu, self.slowest_wall = max(self.slowest_cpu, (cpu, data[:200])), max(self.slowest_wall, wall)
        assert cpu < self.budget_s, f"took {cpu:.2f} s of CPU (budget {self.budget_s} s) on input {data[:300]!r}"

    def report(self, name: str) -> None:
        print(f"\n{name}: {sum(self.counts.values())} inputs, {dict(self.counts)}, "
              f"slowest {self.slowest_cpu[0] * 1000:.0f} ms CPU, {self.slowest_wall * 1000:.0f} ms wall")
