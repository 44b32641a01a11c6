"""Job confs the tests derive from the project's examples (text in, text out)."""

from __future__ import annotations

import os
import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# The Apache SINGA image the real-SINGA suites run (SCYLLA_SINGA_IMAGE names a development build).
REAL_SINGA_IMAGE = os.environ.get("SCYLLA_SINGA_IMAGE", "singa:latest")


def conf_with(text: str, **fields: object) -> str:
    """`text` with top-level scalar fields set (replaced in place, else prepended)."""
    for key, value in fields.items():
        text, n = re.subn(rf"^{key}:.*$", f"{key}: {value}", text, count=1, flags=re.M)
        if not n:
            text = f"{key}: {value}\n" + text
    return text


def downpour4(**fields: object) -> str:
    """The project's Downpour conf with each group's two workers in one process: 2 worker + 2 server processes."""
    text = (EXAMPLES / "frameworks" / "downpour.conf").read_text()
    text = text.replace("  nservers_per_group: 2\n", "  nservers_per_group: 2\n  nworkers_per_procs: 2\n", 1)
    assert "nworkers_per_procs: 2" in text
    return conf_with(text, **fields)
