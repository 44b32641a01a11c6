"""A clean stop of the framework unregisters it from our master, every time (see tests/support/framework_shutdown)."""

from __future__ import annotations

from pathlib import Path

from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from tests.support.framework_shutdown import start_and_stop_cleanly


def test_six_clean_stops_in_a_row_each_leave_no_framework_registered(tmp_path: Path) -> None:
    with EmbeddedMesos([AgentSpec(resources="cpus:1;mem:512", simulate=True)], simulate=True,
                       allocation_interval=0.2, work_dir=tmp_path / "mesos") as mesos:
        ids = start_and_stop_cleanly(mesos.master_address, tmp_path, times=6, credential=mesos.framework_credential)
    assert len(set(ids)) == 6
