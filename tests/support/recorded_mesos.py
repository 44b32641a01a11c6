"""Answers recorded from a real Apache Mesos 1.12 master and agent (tests/fixtures/apache_mesos/).

tools/record_apache_mesos.py made them; the fixtures' README says how. Each
file holds one exchange: `{"request": {...}, "response": {"status", "headers", "body"}}`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "apache_mesos"


def recorded(rel: str) -> dict[str, Any]:
    """The recorded exchange at `rel` (e.g. "master/state.running.json")."""
    return json.loads((FIXTURES / rel).read_text())
