"""A clean stop of scylla-singa's framework unregisters it from a real Apache Mesos master, every time.

The same rounds as on our master (tests/support/framework_shutdown): each a
process that subscribes, stops with teardown and exits at once.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.framework_shutdown import start_and_stop_cleanly
from .real_mesos import MesosProcess


def test_six_clean_stops_in_a_row_each_leave_no_framework_registered(real_master: MesosProcess,
                                                                       tmp_path: Path) -> None:
    ids = start_and_stop_cleanly(real_master.address, tmp_path, times=6)
    assert len(set(ids)) == 6
