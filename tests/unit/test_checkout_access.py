"""The session's first check: a checkout user nobody cannot read is named, with the directory to open."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.checkout_access import closed_directory, nobody_import_error


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run a probe as user nobody")
def test_a_package_in_a_directory_closed_to_others_is_an_error_naming_that_directory() -> None:
    # not under pytest's tmp_path: its parent (/tmp/pytest-of-root) is itself closed to other users
    base = Path(tempfile.mkdtemp(prefix="scylla-access-"))
    try:
        base.chmod(0o755)
        closed = base / "closed"
        (closed / "pkg").mkdir(parents=True)
        (closed / "pkg" / "probe_module_for_nobody.py").write_text("")
        closed.chmod(0o700)
        env = {**os.environ, "PYTHONPATH": str(closed / "pkg")}
        error = nobody_import_error(sys.executable, "probe_module_for_nobody", env)
        assert error is not None and "No module named 'probe_module_for_nobody'" in error
        assert closed_directory(closed / "pkg") == closed
        closed.chmod(0o755)
        assert nobody_import_error(sys.executable, "probe_module_for_nobody", env) is None
        assert closed_directory(closed / "pkg") is None
    finally:
        shutil.rmtree(base)
