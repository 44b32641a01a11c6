"""`scylla-singa ui`: the running frameworks' page addresses, from the store."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from scylla_singa.cli import ui_commands
from scylla_singa.framework.store import JobStore
from scylla_singa.mesos.api import leader_znodes
from scylla_singa.mesos.master.election import ZooKeeperElector
from scylla_singa.mesos.master.master_http import MasterServer
from scylla_singa.mesos.master.master_records import MasterConfig
from scylla_singa.ui import running_views
from tests.support.fake_zookeeper import FakeZK
from .builders import job


def test_prints_the_views_that_answer_newest_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    store = JobStore(tmp_path / "framework.sqlite")
    for fid, job_id, at in (("old-fw", "a-1", 1.0), ("gone-fw", "b-1", 2.0), ("new-fw", "c-1", 3.0)):
        j = job(job_id=job_id)
        j.spec = dataclasses.replace(j.spec, submitted_at=at)
        store.save(j, fid)
        store.set_meta(f"api:{fid}", f"http://127.0.0.1:1{at:.0f}")
        store.set_meta(f"master:{fid}", "127.0.0.1:5050")
    monkeypatch.setattr(running_views, "_answers", lambda url: not url.endswith(":12"))
    monkeypatch.setattr(running_views, "_redirect_target", lambda master: None)  # no master runs here
    result = CliRunner().invoke(ui_commands.ui, [])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "framework new-fw" and "job view    http://127.0.0.1:13/" in lines[1]
    assert "master UI   http://127.0.0.1:5050/" in result.output
    assert "gone-fw" not in result.output and "framework old-fw" in result.output


def test_says_so_when_nothing_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    result = CliRunner().invoke(ui_commands.ui, [])
    assert result.exit_code == 1 and "no running scylla-singa" in result.output


@pytest.fixture
def loop():
    """An event loop on a thread of its own, for real masters (`run(coro)` waits for the result)."""
    lp = asyncio.new_event_loop()
    thread = threading.Thread(target=lp.run_forever, daemon=True)
    thread.start()
    lp.run = lambda coro: asyncio.run_coroutine_threadsafe(coro, lp).result(30)  # type: ignore[attr-defined]
    yield lp
    lp.call_soon_threadsafe(lp.stop)
    thread.join(10)


def _master(loop, zk: FakeZK, work_dir: Path, port: int = 0) -> MasterServer:
    server = MasterServer(MasterConfig(host="127.0.0.1", port=port, work_dir=work_dir),
                          ZooKeeperElector(ZK_URL, client_factory=lambda hosts: zk))
    loop.run(server.start())
    return server


ZK_URL = "zk://zk.test:2181/mesos"


def _ui_master_line(tmp_path: Path, monkeypatch, master_url: str, last_known: str) -> str:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    store = JobStore(tmp_path / "framework.sqlite")
    store.save(job(job_id="a-1"), "fw")
    store.set_meta("api:fw", "http://127.0.0.1:11")
    store.set_meta(JobStore.master_url_key("fw"), master_url)
    store.set_meta(JobStore.leader_key("fw"), last_known)
    monkeypatch.setattr(running_views, "_answers", lambda url: True)
    result = CliRunner().invoke(ui_commands.ui, [])
    assert result.exit_code == 0, result.output
    return next(line for line in result.output.splitlines() if "master UI" in line)


def test_after_a_failover_ui_names_the_new_leader_not_the_dead_one(tmp_path: Path, monkeypatch, loop) -> None:
    zk = FakeZK("zk.test:2181")
    monkeypatch.setattr(leader_znodes, "kazoo_client", lambda hosts: zk)
    first = _master(loop, zk, tmp_path / "m1")
    second = _master(loop, zk, tmp_path / "m2")
    old, new = first.address, second.address
    try:
        assert _ui_master_line(tmp_path, monkeypatch, ZK_URL, old).split()[-1] == f"http://{old}/"
        loop.run(first.stop())  # the leader dies; the standby leads
        # given zk://: the leader is read from ZooKeeper
        assert _ui_master_line(tmp_path, monkeypatch, ZK_URL, old).split()[-1] == f"http://{new}/"
        # given the old leader's address: once it is back as a standby, its /master/redirect names the leader
        first = _master(loop, zk, tmp_path / "m1", port=int(old.rsplit(":", 1)[1]))
        assert _ui_master_line(tmp_path, monkeypatch, old, old).split()[-1] == f"http://{new}/"
        loop.run(first.stop())
        # nobody left to ask: the last known master, saying so
        line = _ui_master_line(tmp_path, monkeypatch, old, old)
        assert line.endswith(f"http://{old}/  (last known; not answering)"), line
    finally:
        for server in (first, second):
            loop.run(server.stop())
