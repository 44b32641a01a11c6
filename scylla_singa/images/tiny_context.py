"""Steps that put files into an image's build context before `docker build`."""

from __future__ import annotations

import shutil
from pathlib import Path


def prepare_tiny(repo_root: Path) -> None:
    """Copy the host's static busybox (Debian's busybox-static) into images/tiny."""
    source = Path(shutil.which("busybox") or "/bin/busybox")
    if not source.exists():
        raise FileNotFoundError("busybox not found; install Debian's busybox-static (make setup does)")
    shutil.copy2(source, repo_root / "images" / "tiny" / "busybox")
