"""The registration-order and peer-loss rules of an attempt's rendezvous."""

from __future__ import annotations

import pytest

from scylla_singa.singa_task import rendezvous as rv


@pytest.mark.parametrize("proc, registered, may", [
    (0, set(), True), (1, set(), False), (1, {0}, True), (3, {0, 2}, False), (3, {0, 1, 2}, True),
    (2, {1, 0, 5}, True),
])
def test_process_k_registers_only_after_all_lower_ids(proc: int, registered: set, may: bool) -> None:
    assert rv.may_register(proc, registered) is may


def test_singa_paths_and_children() -> None:
    assert rv.proc_path(3, 2) == "/singa/app/job-0000000003/proc/proc-2"
    assert rv.registered_procs(["proc-0", "proc-10", "proc-x", "other"]) == {0, 10}
    assert rv.missing_before(4, {0, 2}) == [1, 3]
    assert rv.info_path("j", 2) == "/scylla/jobs/j/attempt-2/info"


def test_a_peer_is_lost_when_live_goes_without_done() -> None:
    seen = {0, 1, 2, 3}
    assert rv.lost_peers(seen, ["info", "live-0", "live-2", "done-3"], me=0) == {1}
    assert rv.lost_peers(seen, ["info", "live-1", "live-2", "done-3", "done-0"], me=1) == set()
    assert rv.lost_peers(seen, ["info"], me=2) == {0, 1, 3}


def test_earlier_attempts_are_stale() -> None:
    assert rv.stale_attempts(["attempt-1", "attempt-2", "attempt-3", "junk"], current=3) == ["attempt-1", "attempt-2"]
