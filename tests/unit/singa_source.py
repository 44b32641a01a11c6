"""Apache SINGA 0.3.0's own files, read from its release tarball at test time.

The tarball is SINGA_SOURCE_TARBALL when set, else the vendored copy next to
the repository (../shared/vendor), else /work/shared/vendor. Without one a
test that needs it fails, printing where it looked: CI always has it, so a
silent skip would hide a broken comparison.
"""

from __future__ import annotations

import tarfile
from functools import lru_cache
from pathlib import Path

import pytest

from scylla_singa.images.apache_singa_context import locate_tarball
from scylla_singa.images.builder import ImageBuildError

REPO = Path(__file__).resolve().parents[2]


def singa_tarball() -> Path:
    """The SINGA 0.3.0 source tarball, found as the image build finds it; fails (never skips) when there is none."""
    try:
        return locate_tarball(REPO)
    except ImageBuildError as exc:
        print(exc)
        pytest.fail(str(exc))


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
