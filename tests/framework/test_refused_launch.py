"""A launch the master refuses (its offer rescinded before the ACCEPT) costs no restart.

The harness rescinds the offer of the first ACCEPT at the embedded master just
before the ACCEPT reaches it, as a master does when an agent is removed or an
offer times out while the framework decides. The master then answers every task
of that ACCEPT with TASK_LOST and REASON_INVALID_OFFERS, for real, through
pymesos's driver; the framework must place the gang again at once.
"""

from __future__ import annotations

import threading

from scylla_singa.common.waiting import wait_until
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


def fail_first_accept(h, reach_master: bool = False, error: bool = True) -> list[str]:
    """Make the driver's first ACCEPT fail before it reaches the master: raise like pymesos does when not
    subscribed (`error`), or vanish silently (a request lost with its connection); the offers it used."""
    driver = h.shell.driver
    accept = driver.acceptOffers
    lost: list[str] = []
    once = threading.Lock()

    def accept_or_fail(offer_ids, operations, filters=None):
        if once.acquire(blocking=False):
            lost.extend(o["value"] for o in offer_ids)
            if error:
                raise RuntimeError("Not connected yet")
            return {}
        return accept(offer_ids, operations, filters)

    driver.acceptOffers = accept_or_fail
    return lost


def test_a_failed_accept_places_the_gang_again_without_a_restart(cluster_factory) -> None:
    h = cluster_factory(["cpus:2;mem:4096"] * 3)
    lost = fail_first_accept(h)
    job = h.run(make_spec("accept-1", DOWNPOUR, command="sleep 1{resume:.0}", max_restarts=0), timeout=60)
    assert lost and job.state is JobState.FINISHED, (job.failure, job.history)
    assert job.restarts == 0 and job.attempt == 2


def test_a_launch_lost_before_a_resubscription_is_placed_again_without_a_restart(cluster_factory) -> None:
    """The signature of issue 16's spurious restart: after a re-subscription the framework reconciles a task
    whose ACCEPT never reached the master, which answers TASK_LOST "Reconciliation: Task is unknown"."""
    h = cluster_factory(["cpus:2;mem:4096"] * 3)
    lost = fail_first_accept(h, error=False)
    h.shell.submit(make_spec("lost-launch-1", DOWNPOUR, command="sleep 1{resume:.0}", max_restarts=0))
    wait_until(lambda: lost and h.shell.job("lost-launch-1").state is JobState.LAUNCHING, 30, "the launch")
    h.mesos.restart_master()  # the driver re-subscribes and reconciles the tasks it launched
    assert h.shell.ended["lost-launch-1"].wait(60), h.shell.job("lost-launch-1").history
    job = h.shell.job("lost-launch-1")
    assert job.state is JobState.FINISHED, (job.failure, job.history)
    assert job.restarts == 0 and job.attempt >= 2
    assert any("REASON_RECONCILIATION" in why for _, _, why in job.history), job.history
