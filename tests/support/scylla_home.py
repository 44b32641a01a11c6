"""A module-scoped SCYLLA_HOME for fixtures that outlive pytest's per-test monkeypatch (module and session
scopes): set for the block, the former value (or its absence) back afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scylla_home_at(path: Path) -> Iterator[Path]:
    former = os.environ.get("SCYLLA_HOME")
    os.environ["SCYLLA_HOME"] = str(path)
    try:
        yield path
    finally:
        if former is None:
            os.environ.pop("SCYLLA_HOME", None)
        else:
            os.environ["SCYLLA_HOME"] = former
