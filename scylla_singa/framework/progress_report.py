"""One PROGRESS report as the framework takes it in: every field typed and bounded (pure).

Reports come over the network from containers, so nothing in one is
trusted to be small or well formed: the body is at most PROGRESS_BODY_LIMIT
bytes (api_server refuses more with 413 before parsing), a report has at
most MAX_KEYS fields, every string at most MAX_STRING characters, every
integer in [0, MAX_INT] (SQLite's INTEGER holds it), every number finite,
and the only nested value is `metrics` (the real-SINGA wrapper's named
values: a flat object of numbers). What passes can be kept in the
ProgressBook and written to SQLite as it is.

A non-finite loss, accuracy or rate (a diverging model prints NaN) is kept
as "no value" (None) rather than refused: the step still counts.
"""

from __future__ import annotations

import json
import math
from typing import Any

PROGRESS_BODY_LIMIT = 64 * 1024   # bytes of one POST /progress body
MAX_KEYS = 32                     # fields of a report, and names in its `metrics`
MAX_KEY = 64                      # characters of a field's name
MAX_STRING = 256                  # characters of a string value
MAX_INT = 2 ** 53                 # exact in a JSON number and in SQLite's INTEGER
PHASES = ("train", "test", "validate")  # docs/contracts.md

INT_FIELDS = ("step", "proc", "group", "worker")
METRIC_FIELDS = ("loss", "accuracy", "samples_per_s")
REQUIRED = ("job", "step")


class BadProgress(ValueError):
    """A report refused: the message says which field and what is allowed."""


def decode_progress(body: bytes) -> dict[str, Any]:
    """The report in a POST body (at most PROGRESS_BODY_LIMIT bytes), checked. Raises BadProgress."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadProgress("the body is not UTF-8 text") from None
    except RecursionError:
        raise BadProgress("the JSON is nested too deeply (a report is a flat object)") from None
    except ValueError as exc:   # JSONDecodeError, and integers of more than 4300 digits
        raise BadProgress(f"the body is not JSON: {exc}") from None
    return parse_progress(data)


def parse_progress(data: Any) -> dict[str, Any]:
    """Validate a PROGRESS object; returns it with numbers as numbers. Raises BadProgress."""
    if not isinstance(data, dict):
        raise BadProgress("progress must be a JSON object")
    if len(data) > MAX_KEYS:
        raise BadProgress(f"progress has {len(data)} fields, at most {MAX_KEYS} are taken")
    for key in REQUIRED:
        if key not in data:
            raise BadProgress(f"progress needs {key!r}")
    out: dict[str, Any] = {}
    for key, value in data.items():
        _check_name(key, "field")
        out[key] = _field(key, value)
    if not out["job"]:
        raise BadProgress("'job' must name a job")
    return out


def _field(key: str, value: Any) -> Any:
    if key in INT_FIELDS:
        return _integer(key, value, required=key == "step")
    if key in METRIC_FIELDS:
        return _metric(key, value)
    if key == "phase":
        if value not in PHASES:
            raise BadProgress(f"'phase' must be one of {', '.join(PHASES)}")
        return value
    if key == "job":
        if not isinstance(value, str):
            raise BadProgress("'job' must be a string (the job id)")
        return _string(key, value)
    if key == "metrics":
        return _metrics(value)
    return _scalar(key, value)


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or len(name) > MAX_KEY:
        raise BadProgress(f"a {what} name is longer than {MAX_KEY} characters")


def _integer(key: str, value: Any, required: bool) -> int | None:
    if value is None and not required:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadProgress(f"{key} must be an integer")
    if not 0 <= value <= MAX_INT:
        raise BadProgress(f"{key} must be between 0 and {MAX_INT}, not {value}")
    return value


def _metric(key: str, value: Any) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise BadProgress(f"{key} must be a number or null")
    try:
        number = float(value)
    except OverflowError:
        raise BadProgress(f"{key} is too large for a number") from None
    return number if math.isfinite(number) else None


def _string(key: str, value: str) -> str:
    if len(value) > MAX_STRING:
        raise BadProgress(f"{key!r} has {len(value)} characters, at most {MAX_STRING} are taken")
    return value


def _scalar(key: str, value: Any) -> Any:
    """A field the contract does not name (e.g. `task`): a short string, a finite number, a bool or null."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _string(key, value)
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise BadProgress(f"{key!r} must be between -{MAX_INT} and {MAX_INT}")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise BadProgress(f"{key!r} must be a finite number")
        return value
    raise BadProgress(f"{key!r} must be a string, a number, true/false or null (only 'metrics' is an object)")


def _metrics(value: Any) -> dict[str, float | None]:
    if not isinstance(value, dict):
        raise BadProgress("'metrics' must be an object of names to numbers")
    if len(value) > MAX_KEYS:
        raise BadProgress(f"'metrics' has {len(value)} names, at most {MAX_KEYS} are taken")
    out = {}
    for name, number in value.items():
        _check_name(name, "metric")
        out[name] = _metric(f"metrics.{name}", number)
    return out
