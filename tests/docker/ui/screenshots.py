"""Screenshots of the pages under test.

They go to $SCYLLA_UI_SCREENSHOTS when set (`SCYLLA_UI_SCREENSHOTS=docs`
refreshes docs/master-ui.png and docs/job-view.png), else to the test's temp dir.
"""

from __future__ import annotations

import os
from pathlib import Path


def screenshot(tab, name: str, tmp_path: Path) -> Path:
    """A full-page PNG of `tab` as `name`, in $SCYLLA_UI_SCREENSHOTS or the test's temp dir."""
    out = Path(os.environ.get("SCYLLA_UI_SCREENSHOTS") or tmp_path) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(out), full_page=True)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    return out
