"""`cluster up` flags become the ClusterConfig that `up` gets (the bring-up itself is in tests/cluster)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from scylla_singa.cli import cluster_commands as cluster_cli
from scylla_singa.cluster.config import ClusterConfig
from scylla_singa.cluster.resource_plan import plan


@pytest.fixture
def captured(monkeypatch) -> list[ClusterConfig]:
    got: list[ClusterConfig] = []

    def fake_up(config, echo=print, keep_on_failure=False):
        got.append(config)
        raise cluster_cli.UpError("stopped here by the test")
    monkeypatch.setattr(cluster_cli, "up", fake_up)
    return got


def test_the_documented_command_line_gives_the_documented_cluster(captured, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    r = CliRunner().invoke(cluster_cli.cluster, [
        "up", "--nodes", "3", "--masters", "2", "--hdfs", "--zk", "--agent-timeout", "10s",
        "--resources", "cpus:2;mem:4096;net_bw:1000", "--node-resources", "3=cpus:8;mem:16384;gpus:1"])
    assert r.exit_code == 1 and "stopped here by the test" in r.output
    (config,) = captured
    assert (config.nodes, config.masters, config.hdfs, config.zk, config.agent_timeout) == (3, 2, True, True, 10.0)
    assert [config.resources_of(n) for n in (1, 2, 3)] == ["cpus:2;mem:4096;net_bw:1000"] * 2 + [
        "cpus:8;mem:16384;gpus:1"]
    agents = {s.name: s.params["argv"] for s in plan(config) if s.name.endswith("-agent")}
    assert agents["scylla-node3-agent"][agents["scylla-node3-agent"].index("--resources") + 1] == \
        "cpus:8;mem:16384;gpus:1"
    assert ClusterConfig.from_dict(config.to_dict()) == config  # the state file keeps the overrides


@pytest.mark.parametrize("args, error", [
    (["--masters", "2"], "--masters 2 needs --zk"),
    (["--nodes", "2", "--node-resources", "3=cpus:1;mem:512"], "there is no node 3"),
    (["--node-resources", "two=cpus:1;mem:512"], "give N=SPEC"),
    (["--node-resources", "1=cpus:1"], "must give at least cpus and mem"),
    (["--agent-timeout", "soon"], "soon"),
], ids=["standby-without-zk", "no-such-node", "not-n-equals", "no-mem", "bad-duration"])
def test_bad_flags_are_usage_errors_before_anything_is_made(captured, args, error) -> None:
    r = CliRunner().invoke(cluster_cli.cluster, ["up", *args])
    assert r.exit_code == 2 and error in r.output and not captured, r.output


def test_machines_flag_makes_bare_machines_for_init_and_join(captured, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SCYLLA_HOME", str(tmp_path))
    r = CliRunner().invoke(cluster_cli.cluster, ["up", "--machines", "--nodes", "3"])
    assert r.exit_code == 1 and "stopped here by the test" in r.output
    (config,) = captured
    assert (config.nodes, config.swarm, config.agents) == (3, False, False)
    assert not any(s.kind in ("swarm_member", "process") for s in plan(config))
    refused = CliRunner().invoke(cluster_cli.cluster, ["up", "--machines", "--hdfs"])
    assert refused.exit_code == 2 and "bare machines" in refused.output
