"""`down` leaves the machine as it found it: after a full up, a partial up, a crash, twice."""

from __future__ import annotations

import os
import subprocess
import sys

import docker
import pytest

from scylla_singa.cluster import engines
from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.discover import leftovers
from scylla_singa.cluster.kinds import KINDS, Kind
from scylla_singa.cluster.state import load
from scylla_singa.cluster.up_down import UpError, down, up
from scylla_singa.common.waiting import wait_until
from .cluster_helpers import assert_clean, node_client

QUIET = lambda _: None  # noqa: E731


def _fail_at(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError(f"injected failure in {kind}")
    monkeypatch.setitem(KINDS, kind, Kind(boom, KINDS[kind].destroy))


def test_up_then_down_leaves_nothing(own_cluster, host_engine: docker.DockerClient) -> None:
    cfg = own_cluster(nodes=2)
    info = up(cfg, echo=QUIET)
    assert len(info.nodes) == 2 and leftovers(cfg, host_engine)  # there is something to remove
    assert down(cfg, echo=QUIET, host=host_engine) == []
    assert_clean(cfg, host_engine)


@pytest.mark.parametrize("kind", ["swarm_member", "images"])
def test_a_failed_up_undoes_what_it_made(own_cluster, host_engine, monkeypatch, kind: str) -> None:
    cfg = own_cluster()
    _fail_at(monkeypatch, kind)
    with pytest.raises(UpError, match=f"failed at {kind}"):
        up(cfg, echo=QUIET)
    assert_clean(cfg, host_engine)


def test_down_after_a_partial_up_kept_for_inspection(own_cluster, host_engine, monkeypatch) -> None:
    cfg = own_cluster(nodes=2)
    _fail_at(monkeypatch, "images")
    with pytest.raises(UpError):
        up(cfg, echo=QUIET, keep_on_failure=True)
    state = load(cfg.state_file)
    assert state is not None and state.status == "failed"
    assert engines.answers(cfg.node_specs()[0].socket)  # the first engine was left running
    monkeypatch.undo()
    assert down(cfg, echo=QUIET, host=host_engine) == []
    assert_clean(cfg, host_engine)


def test_down_without_a_state_file_finds_everything_by_discovery(own_cluster, host_engine) -> None:
    cfg = own_cluster(nodes=1, zk=True)
    info = up(cfg, echo=QUIET)
    node_client(info, 0).containers.run("scylla-tiny:latest", ["sleep", "600"], detach=True)
    cfg.state_file.unlink()  # as if `up` had crashed before writing anything
    down(ClusterConfig(prefix=cfg.prefix, subnet=cfg.subnet, home=cfg.home), echo=QUIET, host=host_engine)
    assert_clean(cfg, host_engine)


def test_down_twice_is_harmless(own_cluster, host_engine) -> None:
    cfg = own_cluster()
    up(cfg, echo=QUIET)
    assert down(cfg, echo=QUIET, host=host_engine) == []
    said: list[str] = []
    assert down(cfg, echo=said.append, host=host_engine) == []
    assert said == []  # nothing found, nothing removed
    assert_clean(cfg, host_engine)


def test_a_kept_data_root_with_a_stale_swarm_is_rejoined(own_cluster, host_engine) -> None:
    cfg = own_cluster()
    first = up(cfg, echo=QUIET)
    old_id = first.nodes[0].swarm_node_id
    down(cfg, echo=QUIET, host=host_engine, keep_data=True)  # the data root keeps its swarm state
    assert leftovers(cfg, host_engine) == [f"directory {cfg.data_dir}"]
    again = up(cfg, echo=QUIET)
    assert again.nodes[0].swarm_node_id != old_id
    assert host_engine.nodes.get(again.nodes[0].swarm_node_id).attrs["Status"]["State"] == "ready"
    with pytest.raises(docker.errors.NotFound):
        host_engine.nodes.get(old_id)


def test_down_after_up_was_killed_half_way(own_cluster, host_engine) -> None:
    """SIGKILL `cluster up` once its first engine is recorded: the write-ahead state lets `down` finish."""
    cfg = own_cluster(nodes=2)
    env = {**os.environ, "SCYLLA_HOME": cfg.home}
    proc = subprocess.Popen([sys.executable, "-m", "scylla_singa", "cluster", "up", "--no-agents", "--nodes", "2",
                             "--prefix", cfg.prefix, "--subnet", cfg.subnet, "--services-subnet", cfg.services_subnet,
                             "--image", "scylla-tiny:latest"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _recorded(cfg, "engine") or proc.poll() is not None, 60, "an engine in the state file")
    finally:
        proc.kill()
        proc.wait()
    state = load(cfg.state_file)
    assert state is not None and state.status == "starting"
    assert leftovers(cfg, host_engine)
    assert down(cfg, echo=QUIET, host=host_engine) == []
    assert_clean(cfg, host_engine)


def _recorded(cfg: ClusterConfig, kind: str) -> bool:
    try:
        state = load(cfg.state_file)
    except ValueError:  # caught mid-write
        return False
    return state is not None and any(e.resource.kind == kind for e in state.entries)


def _reachable(address: str, port: int = 7946) -> bool:
    """TCP to the node's swarm gossip port (every swarm node listens there)."""
    import socket
    try:
        with socket.create_connection((address, port), timeout=1):
            return True
    except OSError:
        return False


def test_a_cut_off_node_is_unreachable_until_reconnected_and_a_killed_host_is_cleaned_up(
        own_cluster, host_engine) -> None:
    from scylla_singa.cluster import faults
    cfg = own_cluster(nodes=2)
    info = up(cfg, echo=QUIET)
    state = load(cfg.state_file)
    node1, node2 = info.nodes
    assert _reachable(node1.address)
    faults.cut_off(state, node1.name)
    try:
        assert not _reachable(node1.address) and _reachable(node2.address)
    finally:
        faults.reconnect(state, node1.name)
    wait_until(lambda: _reachable(node1.address), 10, "node1 back after reconnect")
    node_client(info, 1).containers.run("scylla-tiny:latest", ["sleep", "600"], detach=True)
    faults.kill_host(state, node2.name)
    assert not engines.answers(cfg.node_specs()[1].socket)
    assert down(cfg, echo=QUIET, host=host_engine) == []
    assert_clean(cfg, host_engine)
