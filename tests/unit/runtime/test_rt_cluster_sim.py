"""Whole jobs of several processes in memory: the four classic frameworks, lost peers, resume."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scylla_singa.runtime.checkpoint import complete_steps, open_store
from .rt_harness import SimCluster
from .rt_helpers import FRAMEWORKS, NPROCS, write_conf


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_each_framework_trains_to_90_percent_and_every_process_exits_0(tmp_path: Path, digits_dir: Path,
                                                                        name: str) -> None:
    sim = SimCluster(write_conf(tmp_path, name, digits_dir), tmp_path, seed=1)
    exits = sim.run()
    assert {k: e.code for k, e in exits.items()} == {k: 0 for k in range(NPROCS[name])}, sim.logs
    final = sim.final()
    assert final["steps"] == 600 and final["test_accuracy"] >= 0.9, final
    # every worker displayed every disp_freq steps
    for k, setup in enumerate(sim.setups):
        for g, j in setup.spec.procs[k].workers:
            steps = [p["step"] for p in sim.progress(k) if (p["group"], p["worker"]) == (g, j)]
            assert steps == list(range(50, 601, 50)), (k, g, j)
    assert complete_steps(open_store(str(tmp_path / "ws"))) == {200, 400, 600}


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_a_synchronous_group_computes_the_same_whatever_the_message_order(tmp_path_factory, digits_dir, seed) -> None:
    tmp = tmp_path_factory.mktemp("order")
    conf = write_conf(tmp, "sandblaster", digits_dir, train_steps=60, disp_freq=20, checkpoint_freq=0)
    a = SimCluster(conf, tmp / "a", seed=seed)
    b = SimCluster(conf, tmp / "b", seed=seed + 1)
    a.run(), b.run()
    fa, fb = a.final(), b.final()
    assert fa["test_loss"] == pytest.approx(fb["test_loss"], rel=1e-4)
    assert [p["loss"] for p in a.progress(1)] == pytest.approx([p["loss"] for p in b.progress(1)], rel=1e-4)


@pytest.mark.parametrize("name,victim", [("sandblaster", 3), ("sandblaster", 1), ("hogwild", 2), ("downpour", 0)],
                         ids=["sandblaster-server", "sandblaster-worker", "hogwild-group", "downpour-proc0"])
def test_a_lost_peer_ends_every_other_process_with_exit_3_naming_it(tmp_path: Path, digits_dir: Path,
                                                                     name: str, victim: int) -> None:
    sim = SimCluster(write_conf(tmp_path, name, digits_dir), tmp_path, seed=2, peer_timeout=5.0)

    def kill_midway(s: SimCluster) -> None:
        if s.killed_at is None and any(p["step"] >= 100 for p in s.progress(0 if victim else 1)):
            s.kill(victim)

    exits = sim.run(on_event=kill_midway)
    survivors = set(range(NPROCS[name])) - {victim}
    assert set(exits) == survivors
    for k in survivors:
        assert exits[k].code == 3, (k, exits[k])
        assert f"process {victim} (sim-proc-{victim}:6723)" in exits[k].message, exits[k].message
        assert sim.exit_times[k] - sim.killed_at <= 5.0 + 1.0


def test_peers_that_never_appear_are_named_at_the_startup_deadline(tmp_path: Path, digits_dir: Path) -> None:
    sim = SimCluster(write_conf(tmp_path, "sandblaster", digits_dir), tmp_path, startup_timeout=10.0,
                     not_started=frozenset({2, 4}))
    exits = sim.run()
    for k in (0, 1, 3):
        assert exits[k].code == 3
        assert "peers never appeared within 10s" in exits[k].message or "aborted" in exits[k].message
    assert "process 2 (sim-proc-2:6723), process 4 (sim-proc-4:6723)" in exits[0].message
    assert 10.0 <= sim.exit_times[0] <= 11.0


@pytest.mark.parametrize("name", ["sandblaster", "hogwild"])
def test_killed_after_a_checkpoint_and_resumed_ends_in_the_same_band(tmp_path: Path, digits_dir: Path,
                                                                      name: str) -> None:
    conf = write_conf(tmp_path, name, digits_dir)
    store = open_store(str(tmp_path / "ws"))
    first = SimCluster(conf, tmp_path / "first", seed=3)

    def kill_all_after_200(s: SimCluster) -> None:
        if s.alive and 200 in complete_steps(store):
            for k in list(s.alive):
                s.kill(k)

    first.run(on_event=kill_all_after_200)
    assert first.final() is None and complete_steps(store) == {200}
    again = SimCluster(conf, tmp_path / "again", seed=4, resume=True)
    exits = again.run()
    assert all(e.code == 0 for e in exits.values()) and len(exits) == NPROCS[name]
    assert any("training from step 200" in line for line in again.logs[0])
    assert again.progress(0)[0]["step"] == 250
    assert again.final()["steps"] == 600 and again.final()["test_accuracy"] >= 0.9
    assert complete_steps(store) == {200, 400, 600}


def test_resume_uses_the_newest_step_every_process_can_load(tmp_path: Path, digits_dir: Path) -> None:
    conf = write_conf(tmp_path, "sandblaster", digits_dir, train_steps=400)
    SimCluster(conf, tmp_path / "first").run()
    ckpt = tmp_path / "ws" / "checkpoint"
    assert complete_steps(open_store(str(tmp_path / "ws"))) == {200, 400}
    # process 4's files live in its own workspace only (not shared): without its step 400 file, 200 it is
    (ckpt / "step400-proc4.npz").unlink()
    again = SimCluster(write_conf(tmp_path, "sandblaster", digits_dir, train_steps=400), tmp_path / "again",
                       resume=True)
    again.run()
    assert any("training from step 200" in line for line in again.logs[3])
    assert again.final()["steps"] == 400


def test_resume_without_any_checkpoint_starts_from_0(tmp_path: Path, digits_dir: Path) -> None:
    sim = SimCluster(write_conf(tmp_path, "allreduce", digits_dir, train_steps=100), tmp_path, resume=True)
    sim.run()
    assert any("starting from step 0" in line for line in sim.logs[0])
    assert sim.final()["steps"] == 100
