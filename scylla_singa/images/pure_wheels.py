"""Pure-Python wheels put into an image's build context on the host.

Containers and `docker build` cannot reach the package registries over HTTPS
(certificate verification fails inside them), so the few Python packages an
image needs beyond Debian's are fetched here, as `py3-none-any` wheels, and
unpacked in the Dockerfile. A wheel already in the context, or in the
repository's .cache/wheelhouse, is reused; a pinned sha256 is checked.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from .builder import REPO_ROOT, ImageBuildError

WHEELHOUSE = REPO_ROOT / ".cache" / "wheelhouse"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _good(path: Path, sha256: str | None) -> bool:
    return path.is_file() and (sha256 is None or sha256_of(path) == sha256)


def ensure_pure_wheel(project: str, version: str, filename: str, dest: Path, *, image: str,
                      sha256: str | None = None) -> Path:
    """dest/filename: the wheel of `project==version`, reused when present and (if pinned) intact.

    Raises ImageBuildError naming `image` when pip cannot fetch it or the digest differs.
    """
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / filename
    if _good(target, sha256):
        return target
    cached = WHEELHOUSE / filename
    if _good(cached, sha256):
        shutil.copyfile(cached, target)
        return target
    target.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-deps",
           "--only-binary", ":all:", "--platform", "any", "--python-version", "3.11",
           f"{project}=={version}", "-d", str(dest)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not target.exists():
        raise ImageBuildError(f"could not download {filename} for the {image} image:\n{proc.stdout}{proc.stderr}")
    if not _good(target, sha256):
        target.unlink()
        raise ImageBuildError(f"the downloaded {filename} does not have the sha256 {sha256}")
    return target
