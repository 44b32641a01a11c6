"""Where the SINGA source tarball comes from, and that it is the release it claims to be."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from scylla_singa.images import apache_singa_context as prep
from scylla_singa.images.builder import ImageBuildError


def test_the_variable_wins_then_the_neighbouring_shared_directory(tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    assert prep.tarball_candidates(repo, {"SINGA_SOURCE_TARBALL": "/x/singa.tgz"}) == [Path("/x/singa.tgz")]
    assert prep.tarball_candidates(repo, {}) == [tmp_path / "shared" / "vendor" / prep.TARBALL_NAME,
                                                 Path("/work/shared/vendor") / prep.TARBALL_NAME]


def test_a_missing_tarball_names_the_variable_and_the_archive(tmp_path: Path) -> None:
    with pytest.raises(ImageBuildError) as info:
        prep.locate_tarball(tmp_path / "clone", {"SINGA_SOURCE_TARBALL": str(tmp_path / "nope.tar.gz")})
    message = str(info.value)
    assert "SINGA_SOURCE_TARBALL" in message and prep.APACHE_ARCHIVE in message and "nope.tar.gz" in message


def test_only_a_known_or_named_checksum_is_accepted(tmp_path: Path) -> None:
    fake = tmp_path / "singa.tar.gz"
    fake.write_bytes(b"not singa")
    digest = hashlib.sha256(b"not singa").hexdigest()
    with pytest.raises(ImageBuildError, match=f"sha256 is {digest}"):
        prep.verify_tarball(fake, {})
    assert prep.verify_tarball(fake, {"SINGA_SOURCE_SHA256": digest.upper()}) == digest
    with pytest.raises(ImageBuildError, match="expected 00"):
        prep.verify_tarball(fake, {"SINGA_SOURCE_SHA256": "00"})
