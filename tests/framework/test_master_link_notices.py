"""While the master goes away and comes back: the terminal shows two lines, no traceback; `status` says
that task states are unconfirmed until the framework re-subscribes.

pymesos's real driver against the embedded master, which is restarted on its
port; the framework's log routing is the one `scylla-singa run` installs.
"""

from __future__ import annotations

import json
import re

from scylla_singa.common.waiting import wait_until
from scylla_singa.framework.log_routing import route_logs
from scylla_singa.framework.model import JobState
from .harness import make_spec


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


def _status(job_id: str, *flags: str) -> str:
    from click.testing import CliRunner

    from scylla_singa.cli.run_commands import status
    result = CliRunner().invoke(status, [job_id, *flags])
    assert result.exit_code == 0, result.output
    return result.output


def test_status_says_task_states_are_unconfirmed_while_the_master_is_lost(cluster_factory, tmp_path,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))  # where the harness keeps its store
    h = cluster_factory(["cpus:4;mem:4096"])
    h.shell.submit(make_spec("lost-1", command="sleep 60"))
    wait_until(lambda: (j := h.shell.job("lost-1")) and j.state is JobState.RUNNING, 30, "the job to run")
    fid = h.shell.driver.framework_id
    assert "unconfirmed" not in _status("lost-1")
    h.mesos.call(h.mesos.server.stop())  # the master goes away and stays away
    wait_until(lambda: h.store.master_lost_since(fid) is not None, 30, "the framework to record the loss")
    out = _status("lost-1")
    assert "task states unconfirmed: the framework lost the Mesos master at" in " ".join(out.split()), out
    assert json.loads(_status("lost-1", "--json"))["task_states_confirmed"] is False
    h.mesos.restart_master()
    wait_until(lambda: h.store.master_lost_since(fid) is None, 60, "the framework to re-subscribe")
    assert "unconfirmed" not in _status("lost-1")
    assert json.loads(_status("lost-1", "--json"))["task_states_confirmed"] is True
