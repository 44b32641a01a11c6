"""Helpers for the runtime's tests: example job.conf texts with their data and workspace moved."""

from __future__ import annotations

import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FRAMEWORKS = ("sandblaster", "allreduce", "downpour", "hogwild")
NPROCS = {"digits-mlp": 1, "sandblaster": 5, "allreduce": 3, "downpour": 6, "hogwild": 3}


def example_text(name: str) -> str:
    """The text of examples/digits-mlp/job.conf ("digits-mlp") or examples/frameworks/<name>.conf."""
    path = EXAMPLES / "digits-mlp" / "job.conf" if name == "digits-mlp" else EXAMPLES / "frameworks" / f"{name}.conf"
    return path.read_text()


def set_field(text: str, field: str, value) -> str:
    """Replace (or add at top level) the scalar `field: ...` of a job.conf text."""
    rendered = f'"{value}"' if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    pattern = re.compile(rf"^(\s*){field}:.*$", re.M)
    if pattern.search(text):
        return pattern.sub(lambda m: f"{m.group(1)}{field}: {rendered}", text, count=1)
    return f"{field}: {rendered}\n" + text


def write_conf(tmp: Path, name: str, digits: Path, workspace: Path | None = None, filename: str = "job.conf",
               **fields) -> Path:
    """An example conf reading `digits` and checkpointing into `workspace`, with `fields` replaced."""
    text = example_text(name).replace("/data/digits", str(digits))
    text = re.sub(r'workspace: ".*"', f'workspace: "{workspace or tmp / "ws"}"', text)
    for field, value in fields.items():
        text = set_field(text, field, value)
    path = tmp / filename
    path.write_text(text)
    return path
