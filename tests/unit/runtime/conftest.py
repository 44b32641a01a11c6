"""Fixtures for the runtime's tests: the digits data on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.runtime.digits import write_digits


@pytest.fixture(scope="session")
def digits_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("digits")
    write_digits(out)
    return out
