"""A launch the master refuses (its offer rescinded before the ACCEPT) costs no restart.

The harness rescinds the offer of the first ACCEPT at the embedded master just
before the ACCEPT reaches it, as a master does when an agent is removed or an
offer times out while the framework decides. The master then answers every task
of that ACCEPT with TASK_LOST and REASON_INVALID_OFFERS, for real, through
pymesos's driver; the framework must place the gang again at once.
"""

from __future__ import annotations

import threading

from scylla_singa.framework.model import JobState
from .harness import make_spec

DOWNPOUR = "examples/frameworks/downpour.conf"  # 6 processes of 1 cpu


def rescind_before_first_accept(h) -> list[str]:
    """Make the master rescind the offers of the framework's first ACCEPT before it arrives; their ids."""
    driver = h.shell.driver
    accept = driver.acceptOffers
    rescinded: list[str] = []
    once = threading.Lock()

    async def rescind(ids: list[str]) -> None:
        for oid in ids:
            h.mesos.server.master.remove_offer(oid, rescind=True)

    def accept_after_rescind(offer_ids, operations, filters=None):
        if once.acquire(blocking=False):
            rescinded.extend(o["value"] for o in offer_ids)
            h.mesos.call(rescind(list(rescinded)))
        return accept(offer_ids, operations, filters)

    driver.acceptOffers = accept_after_rescind
    return rescinded


def test_a_gang_whose_launch_is_refused_is_placed_again_without_a_restart(cluster_factory) -> None:
    h = cluster_factory(["cpus:2;mem:4096"] * 3)
    rescinded = rescind_before_first_accept(h)
    # "{resume:.0}" drops the " -resume" of a second attempt: the simulated agents run "sleep 1" as is.
    job = h.run(make_spec("refused-1", DOWNPOUR, command="sleep 1{resume:.0}", max_restarts=0), timeout=60)
    assert rescinded, "the harness never saw an ACCEPT"
    assert job.state is JobState.FINISHED, (job.failure, job.history)
    assert job.restarts == 0 and job.restart_reasons == [] and job.attempt == 2
    whys = [why for _, _, why in job.history]
    assert any("launch refused" in w and "REASON_INVALID_OFFERS" in w for w in whys), whys
    assert [s for _, s, _ in job.history].count("BACKOFF") == 0
    assert all(t.state == "TASK_FINISHED" and t.task_id.endswith(".a2") for t in job.tasks.values())
