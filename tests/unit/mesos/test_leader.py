"""Leader election: zk:// URLs, pymesos's leader rule, and the ZooKeeper elector against a fake client."""

from __future__ import annotations

import json

import pytest

from scylla_singa.mesos.api.leader_znodes import address_of, choose_leader, parse_zk_url
from scylla_singa.mesos.master.election import StandaloneElector, ZooKeeperElector
from tests.support.fake_zookeeper import FakeZK


@pytest.mark.parametrize("url,hosts,path", [
    ("zk://h1:2181/mesos", "h1:2181", "/mesos"), ("zk://a:1,b:2/x/y/", "a:1,b:2", "/x/y"),
    ("zk://user:pw@h:2181/m", "h:2181", "/m"), ("zk://h:2181", "h:2181", "/")],
    ids=["one", "many-nested", "auth", "root"])
def test_parse_zk_url(url, hosts, path) -> None:
    assert parse_zk_url(url) == (hosts, path)


def test_parse_zk_url_refuses_other_schemes() -> None:
    with pytest.raises(ValueError):
        parse_zk_url("http://h:2181/mesos")


def test_choose_leader_follows_pymesos() -> None:
    assert choose_leader(["json.info_0000000003", "log_replicas", "json.info_0000000001"]) == "json.info_0000000001"
    assert choose_leader(["log_replicas"]) is None


def _info(ip: str, port: int) -> dict:
    return {"id": ip, "hostname": ip, "port": port, "address": {"hostname": ip, "ip": ip, "port": port}}


def test_zookeeper_elector_publishes_json_info_and_reports_the_leader() -> None:
    zk = FakeZK("h:2181")
    seen: list = []
    first = ZooKeeperElector("zk://h:2181/mesos", client_factory=lambda hosts: zk)
    first.start(_info("10.0.0.1", 5050), seen.append)
    (node,) = zk.nodes
    assert node.startswith("/mesos/json.info_") and json.loads(zk.nodes[node])["address"]["port"] == 5050
    assert seen == ["10.0.0.1:5050"]
    second_seen: list = []
    second = ZooKeeperElector("zk://h:2181/mesos", client_factory=lambda hosts: zk)
    second.start(_info("10.0.0.2", 5051), second_seen.append)
    assert second_seen == ["10.0.0.1:5050"]  # the first keeps the lead
    first.stop()
    assert second_seen[-1] == "10.0.0.2:5051" and seen == ["10.0.0.1:5050"]
    second.stop()


def test_standalone_elector_leads_at_once() -> None:
    seen: list = []
    StandaloneElector().start(_info("127.0.0.1", 1), seen.append)
    assert seen == ["127.0.0.1:1"]
    assert address_of({"address": {"hostname": "h", "port": 2}}) == "h:2"


def test_a_stale_znode_of_a_former_run_of_this_master_means_no_leader_until_it_expires() -> None:
    zk = FakeZK("h:2181")
    old, seen = ZooKeeperElector("zk://h:2181/mesos", client_factory=lambda hosts: zk), []
    old.start(_info("10.0.0.1", 5050), lambda leader: None)
    stale = next(iter(zk.nodes))  # the old run died; ZooKeeper keeps its znode for a session timeout
    again = ZooKeeperElector("zk://h:2181/mesos", client_factory=lambda hosts: zk)
    again.start(_info("10.0.0.1", 5050), seen.append)
    assert seen == [None]  # not "10.0.0.1:5050": this run does not lead yet
    zk.delete(stale)       # the session ended
    assert seen == [None, "10.0.0.1:5050"]
    again.stop()
