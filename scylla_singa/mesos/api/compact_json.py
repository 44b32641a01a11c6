"""Compact JSON for the master's hot paths (events, agent links): orjson when installed, else json.

Why: every background task costs the master about a dozen JSON
encodings and decodings (its events to the framework, RUN_TASK and ACKs to
the agent, the agent's status updates); orjson does each in a tenth of
json's time. The bytes differ only where JSON allows (non-ASCII as UTF-8
instead of \\u escapes, `1e16` for `1e+16`, and null for NaN and the
infinities, which json writes as tokens no JSON parser takes); what
orjson cannot write (integers beyond 64 bits) falls back to json.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; json keeps a bare install working
    orjson = None  # type: ignore[assignment]


def dumps(obj: Any) -> bytes:
    """`obj` as compact UTF-8 JSON."""
    if orjson is not None:
        try:
            return orjson.dumps(obj)
        except TypeError:
            pass
    return json.dumps(obj, separators=(",", ":")).encode()


def loads(data: str | bytes) -> Any:
    """Parsed JSON; ValueError when it is not JSON (orjson's error is one)."""
    if orjson is not None:
        return orjson.loads(data)
    return json.loads(data)


# A run of 19 digits: an integer orjson may read as a float (it keeps at most 64 bits), where json keeps it.
# Found by mapping every ASCII digit to "0" and every other byte to "." and looking for 19 zeros: two C
# passes, a tenth of the time re's search took over an ACCEPT body (about 1 us for 700 bytes against 10).
_DIGITS_TO_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x2E for b in range(256))
_LONG_DIGIT_RUN = b"0" * 19


def has_long_digit_run(body: bytes) -> bool:
    """Whether `body` holds 19 or more ASCII digits in a row."""
    return _LONG_DIGIT_RUN in body.translate(_DIGITS_TO_ZEROS)


def loads_as_json(body: bytes, parse_constant: Callable[[str], Any]) -> Any:
    """Exactly `json.loads(body, parse_constant=...)`: its value, or its error; orjson's speed where they agree.

    Why: a framework's call is parsed once per call, four or more times per
    task (issue 17), and json takes four times orjson's time. They differ
    only where orjson refuses (lone surrogates, NaN and Infinity, numbers
    beyond a double, a byte-order mark, UTF-16) or reads an integer of more
    than 64 bits as a float; the first go to json, which then answers or
    raises as it always did, and bodies with a 19-digit run never reach orjson.
    """
    return loads_as_json_noting_finite(body, parse_constant)[0]


def loads_as_json_noting_finite(body: bytes, parse_constant: Callable[[str], Any]) -> tuple[Any, bool]:
    """`loads_as_json`'s value, and whether its every number is known to be finite.

    Why: orjson refuses NaN, the infinities and any number beyond a double,
    so what it parsed needs no walk looking for them (the scheduler call's
    finite-number check, a few microseconds of every call); json may give
    an infinity (`1e400`), so what it parsed is not known finite.
    """
    if orjson is not None and not has_long_digit_run(body):
        try:
            return orjson.loads(body), True
        except orjson.JSONDecodeError:
            pass
    return json.loads(body, parse_constant=parse_constant), False
