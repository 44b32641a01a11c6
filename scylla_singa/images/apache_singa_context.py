"""Build-context preparation for images/singa, real Apache SINGA 0.3.0 (host side).

`scylla-singa images build singa` calls `prepare_singa` before `docker build`.
It puts into images/singa/ (git-ignored, left out of the input hash):

- source/singa-src.tar.gz: the SINGA 0.3.0 source release, a build input
  the user can supply. Looked for in order: $SINGA_SOURCE_TARBALL, then
  <repo>/../shared/vendor/, then /work/shared/vendor/ (where CI machines
  keep it); its sha256 must be a known one ($SINGA_SOURCE_SHA256 names
  another, e.g. of Apache's own release tarball). Nothing is downloaded.
- wheels/kazoo-*.whl: the pure-Python ZooKeeper client the task wrapper
  uses (containers cannot reach PyPI over HTTPS, so it is fetched here),
  pinned by version and sha256.
- data/: the digits set as CSV (the project's examples), in SINGA's KVFile
  format, MNIST- and CIFAR-shaped, and as a small text corpus for the rnnlm
  example (scylla_singa.datasets: digits, sentences).

Idempotent: the source and wheel already there and correct are kept.
"""

from __future__ import annotations

import os
from pathlib import Path

from scylla_singa.common.files import write_atomic

from .builder import ImageBuildError
from .pure_wheels import ensure_pure_wheel, sha256_of

TARBALL_NAME = "apache-singa-0.3.0-src.tar.gz"
# The vendored tarball: `git archive --prefix=apache-singa-0.3.0/` of tag v0.3.0-rc3 (d547a861).
KNOWN_SHA256 = {"7169df11e3dccc0d171c6e100774caabe33529d46faf05fd97f78ab43eafa59f": "git archive of v0.3.0-rc3"}
APACHE_ARCHIVE = "https://archive.apache.org/dist/incubator/singa/0.3.0/"
KAZOO_WHEEL = "kazoo-2.11.0-py2.py3-none-any.whl"
KAZOO_SHA256 = "aa6be17159540dae4087661b8d4e24c7b58d4dc26170a2d5b8468b06712d84a9"


def tarball_candidates(repo_root: Path, environ: dict[str, str] | os._Environ = os.environ) -> list[Path]:
    """Where the source tarball is looked for, in order."""
    found = []
    if environ.get("SINGA_SOURCE_TARBALL"):
        return [Path(environ["SINGA_SOURCE_TARBALL"]).expanduser()]
    found.append(repo_root.parent / "shared" / "vendor" / TARBALL_NAME)
    found.append(Path("/work/shared/vendor") / TARBALL_NAME)
    return found


def locate_tarball(repo_root: Path, environ: dict[str, str] | os._Environ = os.environ) -> Path:
    """The first candidate that exists; an ImageBuildError naming the variable and the archive otherwise."""
    candidates = tarball_candidates(repo_root, environ)
    for path in candidates:
        if path.is_file():
            return path
    tried = ", ".join(str(p) for p in candidates)
    raise ImageBuildError(
        f"the Apache SINGA 0.3.0 source tarball is needed to build singa:latest and was not found "
        f"(looked at: {tried}). Get the 0.3.0 source release from {APACHE_ARCHIVE} (or the tree at git "
        f"tag v0.3.0-rc3 of github.com/apache/singa as a .tar.gz) and set SINGA_SOURCE_TARBALL=/path/to/it"
        f" (SINGA_SOURCE_SHA256=<its sha256> if it is not the {TARBALL_NAME} this project checks by default).")


def verify_tarball(path: Path, environ: dict[str, str] | os._Environ = os.environ) -> str:
    """The tarball's sha256 if it is known or the one $SINGA_SOURCE_SHA256 names; ClickException otherwise."""
    digest = sha256_of(path)
    wanted = environ.get("SINGA_SOURCE_SHA256", "").strip().lower()
    if (wanted and digest == wanted) or (not wanted and digest in KNOWN_SHA256):
        return digest
    expected = wanted or " or ".join(f"{d} ({what})" for d, what in KNOWN_SHA256.items())
    raise ImageBuildError(
        f"{path}: sha256 is {digest}, expected {expected}. Use an unmodified Apache SINGA 0.3.0 source "
        f"release; for another packaging of the same release set SINGA_SOURCE_SHA256 to its checked sha256.")


def ensure_source(image_dir: Path, repo_root: Path) -> Path:
    """images/singa/source/singa-src.tar.gz, a checked copy of the located tarball."""
    src = locate_tarball(repo_root)
    digest = verify_tarball(src)
    target = image_dir / "source" / "singa-src.tar.gz"
    if target.is_file() and sha256_of(target) == digest:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as fh:
        write_atomic(target, iter(lambda: fh.read(1 << 20), b""))
    return target


def ensure_kazoo_wheel(wheels: Path) -> Path:
    """The kazoo wheel the task wrapper's ZooKeeper rendezvous uses, pinned by version and sha256."""
    return ensure_pure_wheel("kazoo", KAZOO_WHEEL.split("-")[1], KAZOO_WHEEL, wheels, image="singa",
                             sha256=KAZOO_SHA256)


def ensure_data(data: Path) -> None:
    """The digits as CSV and KVFiles (data/digits), MNIST- and CIFAR-shaped KVFiles, a text corpus (data/rnnlm)."""
    from scylla_singa.datasets.digits import CIFAR_SHAPED, MNIST_SHAPED, write_digits_set
    from scylla_singa.datasets.sentences import write_corpus

    from .singa_context import ensure_digits

    ensure_digits(data / "digits")
    # always: a few seconds, and never stale when the converters change
    write_digits_set(data / "mnist-shaped", MNIST_SHAPED)
    write_digits_set(data / "cifar-shaped", CIFAR_SHAPED)
    write_corpus(data / "rnnlm")


def prepare_singa(repo_root: Path) -> None:
    image_dir = repo_root / "images" / "singa"
    ensure_source(image_dir, repo_root)
    ensure_kazoo_wheel(image_dir / "wheels")
    ensure_data(image_dir / "data")
