"""Workers, servers and processes as state machines: events in, instructions out, no sockets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scylla_singa.common.transition_table import InvalidTransition
from scylla_singa.runtime.machine_events import (Begin, Deliver, Exit, Finished, Log, ProcReceived, ProcRunLocal,
                                                 ProcStarted, ProcTick, SaveSlice, Send, SendTo)
from scylla_singa.runtime.messages import Msg, decode, encode
from scylla_singa.runtime.process import ProcessConfig, ProcessMachine
from scylla_singa.runtime.server import ServerMachine
from scylla_singa.runtime.spec import load_spec
from scylla_singa.runtime.worker import WorkerMachine
from .rt_helpers import write_conf


@pytest.fixture()
def sandblaster(tmp_path: Path, digits_dir: Path):
    return load_spec(write_conf(tmp_path, "sandblaster", digits_dir, checkpoint_freq=1))


@pytest.fixture()
def hogwild(tmp_path: Path, digits_dir: Path):
    return load_spec(write_conf(tmp_path, "hogwild", digits_dir, filename="h.conf"))


def sends(out: list) -> list[Msg]:
    return [i.msg for i in out if isinstance(i, Send)]


def grad(src: str, dst: str, step: int, data: np.ndarray, n: int) -> Deliver:
    return Deliver(Msg("GRAD", src, dst, step, data.astype(np.float32), {"n": n}))


def test_a_server_updates_only_once_every_worker_of_the_group_pushed(sandblaster) -> None:
    lo, hi = sandblaster.server_bounds()[1]
    v = np.linspace(-1, 1, hi - lo).astype(np.float32)
    server = ServerMachine(sandblaster, 0, 1, 0, v.copy())
    assert server.handle(Begin()) == []
    rng = np.random.default_rng(0)
    g = [rng.normal(0, 1, hi - lo).astype(np.float32) for _ in range(3)]
    n = [22, 21, 21]
    assert server.handle(grad("w0.0", "s0.1", 0, g[0] * n[0], n[0])) == []
    assert server.handle(grad("w0.2", "s0.1", 0, g[2] * n[2], n[2])) == []
    out = server.handle(grad("w0.1", "s0.1", 0, g[1] * n[1], n[1]))
    # by hand: first SGD step with momentum (history 0) and weight decay
    mean = (g[0] * 22 + g[1] * 21 + g[2] * 21) / 64
    lr, wd = sandblaster.lr(0), sandblaster.updater.weight_decay
    want = v - lr * (mean + wd * v)
    params = sends(out)
    assert [m.dst for m in params] == ["w0.0", "w0.1", "w0.2"]
    assert all(m.kind == "PARAM" and m.step == 1 and m.meta == {"lo": lo, "hi": hi} for m in params)
    np.testing.assert_allclose(params[0].data, want, rtol=1e-5, atol=1e-6)
    saved = [i for i in out if isinstance(i, SaveSlice)]
    assert len(saved) == 1 and saved[0].step == 1 and saved[0].server == "s0.1"


@pytest.mark.parametrize("bad,msg", [
    (lambda: grad("w0.0", "s0.0", 5, np.zeros(1), 1), "group 0 is at step 0"),
    (lambda: Deliver(Msg("SYNC_REPLY", "s1.0", "s0.0", 0, np.zeros(1))), "no transition from state 'serving'"),
    (lambda: Deliver(Msg("PULL", "w7.0", "s0.0", 0)), "from a worker this server does not serve"),
], ids=["wrong-step", "unexpected-kind", "stranger"])
def test_a_server_refuses_what_the_protocol_does_not_allow_with_its_history(sandblaster, bad, msg) -> None:
    lo, hi = sandblaster.server_bounds()[0]
    server = ServerMachine(sandblaster, 0, 0, 0, np.zeros(hi - lo, np.float32))
    server.handle(Begin())
    server.handle(Deliver(Msg("PULL", "w0.0", "s0.0", 0)))
    with pytest.raises(InvalidTransition, match=msg) as info:
        server.handle(bad())
    assert any("PULL" in h for h in info.value.story)


def test_a_second_gradient_from_the_same_worker_is_a_protocol_error(sandblaster) -> None:
    lo, hi = sandblaster.server_bounds()[0]
    server = ServerMachine(sandblaster, 0, 0, 0, np.zeros(hi - lo, np.float32))
    server.handle(Begin())
    server.handle(grad("w0.0", "s0.0", 0, np.ones(hi - lo), 1))
    with pytest.raises(InvalidTransition, match="second gradient of step 0 from w0.0"):
        server.handle(grad("w0.0", "s0.0", 0, np.ones(hi - lo), 1))


def test_final_pull_waits_until_every_worker_is_done(sandblaster) -> None:
    lo, hi = sandblaster.server_bounds()[0]
    server = ServerMachine(sandblaster, 0, 0, 600, np.zeros(hi - lo, np.float32))
    server.handle(Begin())
    assert server.handle(Deliver(Msg("DONE", "w0.0", "s0.0", 600))) == []
    assert server.handle(Deliver(Msg("FINAL_PULL", "w0.0", "s0.0", 600))) == []
    assert server.handle(Deliver(Msg("DONE", "w0.1", "s0.0", 600))) == []
    out = server.handle(Deliver(Msg("DONE", "w0.2", "s0.0", 600)))
    assert [m.dst for m in sends(out)] == ["w0.0"] and out[-1] == Finished("s0.0")


def test_hogwild_servers_start_from_the_master_copy_and_sync_every_sync_freq(hogwild) -> None:
    total = hogwild.layout.total
    master = ServerMachine(hogwild, 0, 0, 0, np.full(total, 1.0, np.float32))
    other = ServerMachine(hogwild, 1, 0, 0)
    master.handle(Begin())
    (init,) = sends(other.handle(Begin()))
    assert (init.kind, init.dst, init.meta) == ("SYNC", "s0.0", {"init": True})
    assert other.handle(Deliver(Msg("PULL", "w1.0", "s1.0", 0))) == []  # held until the master copy arrives
    (reply,) = sends(master.handle(Deliver(init)))
    (param,) = sends(other.handle(Deliver(reply)))
    assert param.dst == "w1.0" and np.all(param.data == 1.0)
    sync = None
    for step in range(hogwild.shape.sync_freq):
        out = sends(other.handle(grad("w1.0", "s1.0", step, np.full(total, 0.5), 1)))
        sync = next((m for m in out if m.kind == "SYNC"), None)
        assert (sync is not None) == (step == hogwild.shape.sync_freq - 1)
    np.testing.assert_allclose(sync.data, other.values - 1.0, atol=1e-6)  # the change since the last sync
    before_master = master.values.copy()
    (back,) = sends(master.handle(Deliver(sync)))
    np.testing.assert_allclose(master.values, before_master + sync.data, atol=1e-6)
    other.handle(grad("w1.0", "s1.0", 10, np.full(total, 0.5), 1))  # an update while the sync was in flight
    mine_since = other.values - sync.data - 1.0
    other.handle(Deliver(back))
    np.testing.assert_allclose(other.values, back.data + mine_since, atol=1e-5)


def test_a_hogwild_server_waiting_for_a_sync_reply_holds_updates_past_sync_freq(hogwild) -> None:
    """Bounded staleness: a stalled master must not receive a whole trajectory from another group at once."""
    total, freq = hogwild.layout.total, hogwild.shape.sync_freq
    master = ServerMachine(hogwild, 0, 0, 0, np.full(total, 1.0, np.float32))
    other = ServerMachine(hogwild, 1, 0, 0)
    master.handle(Begin())
    (init,) = sends(other.handle(Begin()))
    other.handle(Deliver(sends(master.handle(Deliver(init)))[0]))
    step, sync = 0, None
    for step in range(freq):  # the sync goes out after `freq` updates; the master is stalled: no reply
        sync = next((m for m in sends(other.handle(grad("w1.0", "s1.0", step, np.full(total, 0.5), 1)))
                     if m.kind == "SYNC"), sync)
    assert sync is not None
    for step in range(freq, 2 * freq):  # `freq` more updates while it is in flight: still answered
        (param,) = [m for m in sends(other.handle(grad("w1.0", "s1.0", step, np.full(total, 0.5), 1)))
                    if m.kind == "PARAM"]
        assert param.step == step + 1
    held = sends(other.handle(grad("w1.0", "s1.0", 2 * freq, np.full(total, 0.5), 1)))
    assert held == [] and other.updates == 2 * freq  # one more would be too far ahead: held
    (reply,) = sends(master.handle(Deliver(sync)))
    released = sends(other.handle(Deliver(reply)))
    assert [(m.kind, m.step) for m in released if m.kind == "PARAM"] == [("PARAM", 2 * freq + 1)]
    assert other.updates == 2 * freq + 1


def test_a_worker_refuses_params_before_it_started_and_out_of_step(sandblaster, tmp_path) -> None:
    model = sandblaster.build_model()
    worker = WorkerMachine(sandblaster, 0, 1, model, {}, 0, lambda: 0.0, "j", 1, 0.0)
    with pytest.raises(InvalidTransition, match="no transition from state 'new'"):
        worker.handle(Deliver(Msg("PARAM", "s0.0", "w0.1", 0, np.zeros(3), {"lo": 0, "hi": 3})))
    pulls = sends(worker.handle(Begin()))
    assert [(m.kind, m.dst, m.step) for m in pulls] == [("PULL", "s0.0", 0), ("PULL", "s0.1", 0)]
    lo, hi = sandblaster.server_bounds()[0]
    with pytest.raises(InvalidTransition, match="expected step 0"):
        worker.handle(Deliver(Msg("PARAM", "s0.0", "w0.1", 3, np.zeros(hi - lo), {"lo": lo, "hi": hi})))


def test_wire_encoding_round_trips() -> None:
    msg = Msg("GRAD", "w1.2", "s0.1", 17, np.arange(5, dtype=np.float32), {"n": 3}, proc=4)
    got = decode(encode(msg))
    assert (got.kind, got.src, got.dst, got.step, got.meta, got.proc) == ("GRAD", "w1.2", "s0.1", 17, {"n": 3}, 4)
    np.testing.assert_array_equal(got.data, msg.data)
    assert decode(encode(Msg("EXIT", "p0", "p1"))).data is None


# ---- the process machine with fake time


def proc_machine(k: int = 0, n: int = 3, entities=None, **cfg) -> ProcessMachine:
    config = ProcessConfig(proc=k, nprocs=n, peers={i: f"h{i}:1" for i in range(n)}, **cfg)
    return ProcessMachine(config, {}, lambda start: entities or ([], []))


def hb(src: int, dst: int, now: float, **meta) -> ProcReceived:
    return ProcReceived(Msg("HEARTBEAT", f"p{src}", f"p{dst}", 0, None, meta, src), now)


def test_a_silent_peer_is_lost_after_the_timeout_and_the_others_are_told() -> None:
    m = proc_machine(peer_timeout_s=5.0)
    m.handle(ProcStarted(0.0))
    m.handle(hb(1, 0, 0.1))
    out = m.handle(hb(2, 0, 0.2))
    assert any(isinstance(i, Log) and "all 3 processes up" in i.message for i in out)
    t = 0.2
    while True:
        t += 0.2
        m.handle(ProcReceived(Msg("HEARTBEAT", "p1", "p0", 0, None, {}, 1), t))  # process 1 keeps talking
        out = m.handle(ProcTick(t))
        if any(isinstance(i, Exit) for i in out):
            break
        assert t < 10
    assert 5.2 <= t <= 5.5
    exit_ = out[-1]
    assert exit_.code == 3 and "lost peer process 2 (h2:1)" in exit_.message
    aborts = [i for i in out if isinstance(i, SendTo) and i.msg.kind == "ABORT"]
    assert {a.proc for a in aborts} == {1, 2} and "process 2" in aborts[0].msg.meta["reason"]
    assert m.handle(ProcTick(t + 1)) == []  # exited: nothing more


def test_an_abort_from_a_peer_ends_the_process_with_exit_3() -> None:
    m = proc_machine(k=1)
    m.handle(ProcStarted(0.0))
    out = m.handle(ProcReceived(Msg("ABORT", "p0", "p1", 0, None, {"reason": "lost peer process 2"}, 0), 1.0))
    assert out == [Exit(3, "process 0 (h0:1) aborted the job: lost peer process 2")]


def test_messages_before_the_rendezvous_are_held_then_delivered(sandblaster) -> None:
    lo, hi = sandblaster.server_bounds()[0]
    server = ServerMachine(sandblaster, 0, 0, 0, np.zeros(hi - lo, np.float32))
    config = ProcessConfig(proc=1, nprocs=2)
    m = ProcessMachine(config, {"w0.0": 0, "s0.0": 1}, lambda start: ([], [server]))
    m.handle(ProcStarted(0.0))
    m.handle(ProcReceived(Msg("PULL", "w0.0", "s0.0", 0, None, {}, 0), 0.1))  # arrives before proc 0's heartbeat
    assert not m.has_local_work
    m.handle(hb(0, 1, 0.2))
    assert m.has_local_work
    out = m.handle(ProcRunLocal(0.3))
    assert [(i.proc, i.msg.kind, i.msg.proc) for i in out] == [(0, "PARAM", 1)]


def test_process_0_exits_only_after_every_process_is_done_and_acknowledged() -> None:
    m = proc_machine(exit_ack_timeout_s=5.0)
    m.handle(ProcStarted(0.0))
    m.handle(hb(1, 0, 0.1))
    out = m.handle(hb(2, 0, 0.1))  # no local entities: done at once
    assert not any(isinstance(i, SendTo) and i.msg.kind == "EXIT" for i in out)
    m.handle(ProcReceived(Msg("PROC_DONE", "p1", "p0", 0, None, {}, 1), 0.2))
    out = m.handle(ProcReceived(Msg("PROC_DONE", "p2", "p0", 0, None, {}, 2), 0.3))
    assert sorted(i.proc for i in out if i.msg.kind == "EXIT") == [1, 2]
    assert m.handle(ProcReceived(Msg("EXIT_ACK", "p1", "p0", 0, None, {}, 1), 0.4)) == []
    assert m.handle(ProcReceived(Msg("EXIT_ACK", "p2", "p0", 0, None, {}, 2), 0.5)) == [Exit(0, "")]


def test_process_0_exits_at_the_ack_deadline_even_without_acks() -> None:
    m = proc_machine(n=2, exit_ack_timeout_s=2.0)
    m.handle(ProcStarted(0.0))
    m.handle(hb(1, 0, 0.1))
    m.handle(ProcReceived(Msg("PROC_DONE", "p1", "p0", 0, None, {}, 1), 0.2))
    assert m.handle(ProcTick(1.0)) == []
    assert Exit(0, "") in m.handle(ProcTick(2.3))


@pytest.mark.parametrize("mine,theirs,want", [
    ((200, 400), [(200, 400), (200,)], 200),
    ((200, 400), [None, (400, 200)], 400),
    ((), [(200,), (200,)], 0),
], ids=["newest-common", "unconstrained-peer", "nothing-common"])
def test_the_resume_step_is_the_newest_every_process_can_load(mine, theirs, want) -> None:
    starts = []
    config = ProcessConfig(proc=0, nprocs=3, resume=True, resumable_steps=mine)
    m = ProcessMachine(config, {}, lambda start: (starts.append(start), ([], []))[1])
    m.handle(ProcStarted(0.0))
    for k, ckpts in enumerate(theirs, start=1):
        m.handle(hb(k, 0, 0.1, resume=True, ckpts=None if ckpts is None else list(ckpts)))
    assert starts == [want]
