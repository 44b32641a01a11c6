"""ClusterConfig: validation, names and addresses (pure)."""

from __future__ import annotations

import pytest

from scylla_singa.cluster.config import ClusterConfig, ConfigError


@pytest.mark.parametrize("kwargs, message", [
    ({"nodes": 0}, "--nodes"),
    ({"nodes": 41}, "--nodes"),
    ({"masters": 6, "zk": True}, "--masters"),
    ({"masters": 2}, "needs --zk"),
    ({"prefix": "Scylla"}, "prefix"),
    ({"prefix": "a-b"}, "prefix"),
    ({"prefix": "waytoolongprefix"}, "prefix"),
    ({"subnet": "172.17.5.0/24"}, "overlaps 172.17.0.0/16"),
    ({"subnet": "10.1.0.0/24"}, "overlaps 10.0.0.0/8"),
    ({"subnet": "8.8.8.0/24"}, "private"),
    ({"subnet": "172.31.240.1/24"}, "not a network address"),
    ({"subnet": "172.31.240.0/28"}, "/24 or larger"),
    ({"services_subnet": "172.31.240.0/25"}, "overlap"),
    ({"resources": "cpus:two"}, "NAME:NUMBER"),
    ({"resources": "disk:10"}, "cpus and mem"),
    ({"agent_timeout": 0.5}, "--agent-timeout"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_invalid_configs_are_refused_with_a_reason(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ClusterConfig(**kwargs)


def test_names_fit_linux_interface_names_and_carry_the_prefix() -> None:
    cfg = ClusterConfig(nodes=40, masters=5, zk=True, prefix="abcdefgh")
    names = [cfg.bridge, cfg.services_bridge] + [n.veth for n in cfg.node_specs()] + \
            [m.veth for m in cfg.master_specs()]
    assert all(len(n) <= 15 and n.startswith("abcdefgh-") for n in names)
    assert len(set(names)) == len(names)


def test_addresses_are_distinct_and_inside_the_subnets() -> None:
    cfg = ClusterConfig(nodes=3, masters=2, zk=True, hdfs=True)
    nodes, masters = cfg.node_specs(), cfg.master_specs()
    assert [n.address for n in nodes] == ["172.31.240.101", "172.31.240.102", "172.31.240.103"]
    assert [m.endpoint for m in masters] == ["172.31.240.11:5050", "172.31.240.12:5050"]
    assert cfg.host_address == "172.31.240.1"
    assert len({n.bip for n in nodes}) == 3
    assert cfg.zk_url == "zk://172.31.241.10:2181/mesos"
    assert cfg.webhdfs_url == "http://172.31.241.20:9870"
    assert nodes[0].docker_host == "unix:///run/scylla-cluster/scylla/node1/docker.sock"


def test_services_are_absent_unless_asked_for() -> None:
    cfg = ClusterConfig()
    assert cfg.zk_url is None and cfg.webhdfs_url is None and cfg.hdfs_url is None


def test_config_round_trips_through_a_dict() -> None:
    cfg = ClusterConfig(nodes=3, masters=2, zk=True, images=("a:1", "b:2"), home="/tmp/x", agent_timeout=10.0)
    assert ClusterConfig.from_dict(cfg.to_dict()) == cfg


def test_paths_follow_scylla_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", "/tmp/somewhere")
    cfg = ClusterConfig(prefix="abc")
    assert str(cfg.state_file) == "/tmp/somewhere/cluster/abc/state.json"
    assert str(cfg.run_dir) == "/run/scylla-cluster/abc"
