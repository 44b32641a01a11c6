"""What the terminal shows while the master goes away and comes back: two lines, no traceback.

pymesos's real driver against the embedded master, which is restarted on its
port; the framework's log routing is the one `scylla-singa run` installs.
"""

from __future__ import annotations

import re

from scylla_singa.common.waiting import wait_until
from scylla_singa.framework.log_routing import route_logs


def test_a_master_restart_prints_lost_then_resubscribed_and_no_traceback(cluster_factory, tmp_path, capfd) -> None:
    routing = route_logs(tmp_path / "framework.log", verbose=False)
    try:
        h = cluster_factory(["cpus:4;mem:4096"])
        lines: list[str] = []
        h.shell.notify = lines.append
        address = h.mesos.master_address
        h.mesos.restart_master()
        wait_until(lambda: len(lines) >= 2, 60, "the framework to say the master was lost and is back")
        assert lines[0] == f"master {address} lost; reconnecting ..."
        assert re.fullmatch(rf"re-subscribed to {re.escape(address)} in \d+\.\d s", lines[1]), lines
        assert len(lines) == 2  # one line per event, however often pymesos retried
        fid = h.shell.driver.framework_id  # `ui` and `logs` read where the master is now from the store
        wait_until(lambda: h.store.get_meta(h.store.leader_key(fid)) == address, 10, "the leader recorded")
        terminal = capfd.readouterr().err
        assert "Traceback" not in terminal and "pymesos" not in terminal, terminal
    finally:
        routing.remove()
