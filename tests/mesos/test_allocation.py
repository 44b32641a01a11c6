"""Allocation through the whole stack: DRF on the paper's example, FIFO, offer timeouts, scale."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.mesos_framework import task_info

TASKS = {"A": (1.0, 4096.0), "B": (3.0, 1024.0)}


def _fits(offer: dict, cpus: float, mem: float) -> bool:
    got = {r["name"]: r.get("scalar", {}).get("value", 0) for r in offer["resources"]}
    return got.get("cpus", 0) >= cpus and got.get("mem", 0) >= mem


def _one_task_per_offer(name: str, launched: dict, declined: dict, lock: threading.Lock, held: list):
    cpus, mem = TASKS[name]

    def on_offers(driver, offers) -> None:
        for offer in offers:
            with lock:
                if held is not None and not held[0]:  # until both frameworks are subscribed
                    held[1].append((on_offers, driver, [offer]))
                    continue
            if _fits(offer, cpus, mem):
                with lock:
                    launched[name] += 1
                driver.launchTasks(offer["id"], [task_info(offer["agent_id"], cpus=cpus, mem=mem)],
                                   filters={"refuse_seconds": 0})
            else:
                with lock:
                    declined[name] += 1
                driver.declineOffer(offer["id"], filters={"refuse_seconds": 600})
    return on_offers


@pytest.mark.parametrize("allocator,expected", [("drf", {"A": 3, "B": 2}), ("fifo", {"A": 4, "B": 1})],
                         ids=["drf-paper-example", "fifo-first-comes-first"])
def test_two_frameworks_share_one_agent(cluster, framework, allocator, expected) -> None:
    """The Mesos/DRF paper's example: 9 CPU / 18 GB; A's tasks <1 CPU, 4 GB>, B's <3 CPU, 1 GB>."""
    m = cluster([{"resources": "cpus:9;mem:18432"}], allocator=allocator)
    launched, declined, lock = {"A": 0, "B": 0}, {"A": 0, "B": 0}, threading.Lock()
    held: list = [False, []]  # [go, offers held back until both frameworks are subscribed]
    a = framework(m.master_address, name="A", on_offers=_one_task_per_offer("A", launched, declined, lock, held))
    framework(m.master_address, name="B", on_offers=_one_task_per_offer("B", launched, declined, lock, held))
    with lock:
        held[0] = True
        waiting = list(held[1])
    for handler, driver, offers in waiting:
        handler(driver, offers)
    a.sched.wait(lambda: declined["A"] and declined["B"], timeout=15, what="both frameworks to decline leftovers")
    assert launched == expected


def test_offer_timeout_rescinds_and_reoffers(cluster, framework) -> None:
    m = cluster(1, offer_timeout=0.5)
    f = framework(m.master_address)
    first = f.sched.wait(lambda: f.sched.all_offers, what="an offer")[0]
    f.sched.wait(lambda: first["id"]["value"] in f.sched.rescinded, timeout=5, what="RESCIND")
    f.sched.wait(lambda: len(f.sched.all_offers) >= 2, timeout=5, what="the resources offered again")


def test_a_thousand_simulated_agents_register_and_are_offered(cluster, framework) -> None:
    t0 = time.monotonic()
    m = cluster(0, fleet=1000)
    registered = time.monotonic() - t0
    f = framework(m.master_address)
    f.sched.wait(lambda: len({o["agent_id"]["value"] for o in f.sched.all_offers}) == 1000, timeout=20,
                 what="offers from 1000 agents")
    total = time.monotonic() - t0
    assert registered < 10 and total < 15, f"registered in {registered:.1f}s, offered by {total:.1f}s"
    snap = __import__("requests").get(f"http://{m.master_address}/metrics/snapshot", timeout=10).json()
    assert snap["master/slaves_active"] == 1000 and snap["master/cpus_total"] == 4000
