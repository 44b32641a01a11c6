"""The state file and the addresses it tells others (pure, on a temp dir)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.resource_plan import plan
from scylla_singa.cluster.state import Entry, State, info, load, box_cluster, save, state_path


def _facts(r) -> dict:
    if r.kind == "swarm_member":
        return {"node_id": f"id-{r.name}"}
    if r.kind == "process":  # as launcher.start records them: the argv it ran
        return {"pid": 1, "argv": r.params["argv"] + [f for f, v in r.params["optional"].items() if v]}
    return {}


def _state(config: ClusterConfig, status: str = "up", skip: tuple[str, ...] = ()) -> State:
    entries = [Entry(r, done=r.name not in skip, facts=_facts(r)) for r in plan(config)]
    return State(config, status, entries)


def test_state_round_trips_through_the_file(tmp_path: Path) -> None:
    cfg = ClusterConfig(nodes=2, masters=2, zk=True, hdfs=True, home=str(tmp_path))
    state = _state(cfg)
    save(state)
    again = load(cfg.state_file)
    assert again is not None and again.to_dict() == state.to_dict()


def test_a_missing_state_file_means_no_cluster(tmp_path: Path) -> None:
    assert load(tmp_path / "nope.json") is None
    assert box_cluster(home=tmp_path) is None


def test_a_corrupt_state_file_is_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("{not json")
    with pytest.raises(ValueError, match="cluster down"):
        load(path)


@pytest.mark.parametrize("config, master, zk, webhdfs", [
    (ClusterConfig(nodes=2), "172.31.240.11:5050", None, None),
    (ClusterConfig(nodes=2, masters=2, zk=True, hdfs=True), "zk://172.31.241.10:2181/mesos",
     "zk://172.31.241.10:2181/mesos", "http://172.31.241.20:9870"),
    (ClusterConfig(nodes=2, agents=False, hdfs=True), None, None, "http://172.31.241.20:9870"),
], ids=["one-master", "elected-masters", "engines-only"])
def test_info_gives_the_addresses_of_what_was_started(config, master, zk, webhdfs) -> None:
    i = info(_state(config))
    assert (i.master, i.zk, i.webhdfs) == (master, zk, webhdfs)
    assert [n.name for n in i.nodes] == [f"scylla-node{k}" for k in range(1, config.nodes + 1)]
    assert i.nodes[0].swarm_node_id == "id-scylla-node1-swarm"
    assert (i.nodes[0].agent is not None) == config.agents


def test_skipped_masters_and_agents_are_not_advertised() -> None:
    cfg = ClusterConfig(nodes=2)
    i = info(_state(cfg, skip=("scylla-master1-master", "scylla-node1-agent", "scylla-node2-agent")))
    assert i.master is None and i.masters == [] and all(n.agent is None for n in i.nodes)


def test_box_cluster_is_only_a_cluster_that_is_up(tmp_path: Path) -> None:
    cfg = ClusterConfig(nodes=1, home=str(tmp_path))
    save(_state(cfg, status="starting"))
    assert box_cluster(home=tmp_path) is None
    save(_state(cfg, status="up"))
    found = box_cluster(home=tmp_path)
    assert found is not None and found.state_file == str(state_path(tmp_path)) and found.status == "up"


def test_without_a_prefix_the_default_or_the_only_cluster_up_is_found(tmp_path: Path) -> None:
    first = ClusterConfig(nodes=1, home=str(tmp_path), prefix="lab")
    save(_state(first, status="up"))
    found = box_cluster(home=tmp_path)
    assert found is not None and found.prefix == "lab"  # the only one up
    second = ClusterConfig(nodes=1, home=str(tmp_path), prefix="lab2")
    save(_state(second, status="up"))
    assert box_cluster(home=tmp_path) is None  # two up, neither the default: no guessing
    assert box_cluster(home=tmp_path, prefix="lab2").prefix == "lab2"
    save(_state(ClusterConfig(nodes=1, home=str(tmp_path)), status="up"))
    assert box_cluster(home=tmp_path).prefix == "scylla"  # the default wins
