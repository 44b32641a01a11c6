"""The scale benchmark's probe framework and its notes.

Why the probe test: pymesos sends each call synchronously on the thread that
delivers events, so a probe that declined thousands of offers one call at a
time held its own TASK_STARTING behind them (measured: 9 - 45 s at 50,000
agents, which the report then blamed on the master).
"""

from __future__ import annotations

from typing import Any

from bench.scale import Probe, ProbeTask, section


def _offer(i: int, cpus: float) -> dict[str, Any]:
    return {"id": {"value": f"o{i}"}, "agent_id": {"value": f"a{i}"},
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": cpus}},
                          {"name": "mem", "type": "SCALAR", "scalar": {"value": 1024.0}}]}


class RecordingDriver:
    """Records the calls a pymesos driver would send (one HTTP request each)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def launchTasks(self, offer_id, tasks, filters=None) -> None:  # noqa: N802 - pymesos's names
        self.calls.append(("launch", offer_id["value"]))

    def suppressOffers(self) -> None:  # noqa: N802
        self.calls.append(("suppress", None))

    def declineOffer(self, offer_ids, filters=None) -> None:  # noqa: N802
        ids = [offer_ids] if isinstance(offer_ids, dict) else offer_ids
        self.calls.append(("decline", sorted(o["value"] for o in ids)))


def test_the_probe_takes_the_first_fitting_offer_and_declines_the_rest_in_one_call() -> None:
    probe, driver = Probe(), RecordingDriver()
    probe.current = ProbeTask("probe-1", 0.0)
    offers = [_offer(0, 0.5)] + [_offer(i, 4.0) for i in range(1, 1000)]
    probe.resourceOffers(driver, offers)
    assert probe.errors == []
    assert driver.calls[0] == ("launch", "o1")        # o0 does not fit (0.5 cpus)
    declines = [c for c in driver.calls if c[0] == "decline"]
    assert declines == [("decline", sorted(f"o{i}" for i in range(1000) if i != 1))]
    assert len(driver.calls) == 3                     # launch, suppress, one decline
    assert probe.current.offers_in_batch == 1000


def test_offers_with_no_probe_waiting_are_all_declined_in_one_call() -> None:
    probe, driver = Probe(), RecordingDriver()
    probe.resourceOffers(driver, [_offer(i, 4.0) for i in range(5)])
    assert driver.calls == [("decline", [f"o{i}" for i in range(5)])]


def _point(agents: int, overheads: list[float], wait: dict[str, float] | None) -> dict[str, Any]:
    probes = [{"overhead_s": o, "times": {"offered": 0.2, "launched": 0.3, "TASK_STARTING": 0.3 + o / 2,
                                          "TASK_RUNNING": 0.4 + o / 2, "TASK_FINISHED": 10 + o},
               "offers_in_batch": 150, "offers_callback_s": 0.5} for o in overheads]
    return {"agents": agents, "frameworks": 200, "probes": probes, "tasks_finished_per_s": 1600.0,
            "cpu_percent": {"master": 91.0, "fleet": 49.0, "frameworks": 36.0},
            **({"wait_percent": wait} if wait is not None else {}),
            "rss_mb": {"master": 1800.0}, "duplicate_updates": 0, "updates": 1000, "register_s": 8.0}


def _notes(points: list[dict[str, Any]], stopped: str | None = None) -> str:
    data = {"anchor_s": 1.0, "probe_task_s": 10.0, "agent_resources": "cpus:4",
            "config": {"frameworks": 200, "probes": 3, "warmup_s": 20.0}, "points": points, "stopped": stopped,
            "largest_planned": points[-1]["agents"]}
    return "\n".join(section(data).notes)


def test_a_largest_size_over_a_second_says_which_part_saturates_and_how_long_each_waited_for_a_core() -> None:
    notes = _notes([_point(30000, [0.05, 0.06, 0.07], None),
                    _point(50000, [1.5, 2.0, 2.5], {"master": 7.0, "fleet": 12.0, "frameworks": 9.0})])
    assert "Which part saturates: at 50,000 agents the master used 91%" in notes
    assert "master 7%, fleet 12%, frameworks 9%" in notes
    assert "about 98% of a core" in notes
    assert "offered 150 agents at once" in notes


def test_a_largest_size_under_a_second_needs_no_saturation_note() -> None:
    assert "Which part saturates" not in _notes([_point(50000, [0.2, 0.3, 0.4], {"master": 3.0})])


def test_the_intro_names_the_probe_count_and_warmup() -> None:
    data = {"anchor_s": 1.0, "probe_task_s": 10.0, "agent_resources": "cpus:4",
            "config": {"frameworks": 200, "probes": 3, "warmup_s": 20.0}, "points": [_point(1000, [0.1], None)],
            "stopped": None, "largest_planned": 1000}
    intro = section(data).intro
    assert "3 probes per size after 20 s of steady churn" in intro and "{" not in intro
