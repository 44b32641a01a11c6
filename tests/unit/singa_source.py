"""Apache SINGA 0.3.0's own files, read from its release tarball at test time.

The tarball is SINGA_SOURCE_TARBALL when set, else the vendored copy next to
the repository (../shared/vendor), else /work/shared/vendor. Without one a
test that needs it fails, printing where it looked: CI always has it, so a
silent skip would hide a broken comparison.
"""

from __future__ import annotations

import os
import tarfile
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TARBALL_NAME = "apache-singa-0.3.0-src.tar.gz"


def singa_tarball() -> Path:
    """The SINGA 0.3.0 source tarball; fails (never skips) when none can be found.

    SINGA_SOURCE_TARBALL, when set, is the only place looked at: a wrong path there is a mistake to report.
    """
    chosen = os.environ.get("SINGA_SOURCE_TARBALL")
    candidates = [Path(chosen)] if chosen else [REPO.parent / "shared" / "vendor" / TARBALL_NAME,
                                                Path("/work/shared/vendor") / TARBALL_NAME]
    for path in candidates:
        if path.is_file():
            return path
    reason = ("SINGA 0.3.0's source tarball was not found (looked at: "
              + ", ".join(str(p) for p in candidates)
              + "); set SINGA_SOURCE_TARBALL to the apache-singa 0.3.0 source .tar.gz from Apache's archive")
    print(reason)
    pytest.fail(reason)


@lru_cache(maxsize=4)
def singa_files(directory: str, suffix: str) -> dict[str, bytes]:
    """Files under `directory` (relative to the source root, e.g. "src/proto") ending in `suffix`, by relative path."""
    out: dict[str, bytes] = {}
    with tarfile.open(singa_tarball()) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            relative = Path(*parts[1:]).as_posix() if len(parts) > 1 else ""
            if member.isfile() and relative.startswith(directory + "/") and relative.endswith(suffix):
                out[relative] = tar.extractfile(member).read()
    assert out, f"{singa_tarball()} has no {directory}/*{suffix}: is it SINGA 0.3.0's source?"
    return out
