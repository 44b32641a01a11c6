"""The pure parts of init/join/leave: join tokens, offered resources, systemd units, the restart
schedule, the rows of `cluster status`, the membership record, the plan of bare machines, and the
delivery a run chooses on such a cluster."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from scylla_singa.cluster.config import ClusterConfig, ConfigError
from scylla_singa.cluster.join_token import JoinToken, JoinTokenError, PREFIX, decode, encode
from scylla_singa.cluster.local import local_cluster
from scylla_singa.cluster.machine_facts import MachineFacts, offered_resources
from scylla_singa.cluster.member_state import FIRST, MEMBER, MemberState, load_member, member_info
from scylla_singa.cluster.member_status import machine_rows
from scylla_singa.cluster.resource_plan import plan
from scylla_singa.cluster.supervisor import (FIRST_BACKOFF_S, HEALTHY_AFTER_S, MAX_BACKOFF_S, Supervised,
                                             next_backoff, unit_text)
from scylla_singa.framework.runtime_kind import RuntimeKind
from scylla_singa.framework.session import RunOptions, UsageError, resolve_delivery
from scylla_singa.mesos.api.credentials import Credential

NOW = 1_800_000_000.0
TOKEN = JoinToken(token_id="ab12cd34", cluster="lab", master="10.0.0.1:5050", swarm_manager="10.0.0.1:2377",
                  swarm_token="SWMTKN-1-xyz", agent=Credential("scylla-agent", "s3cret-a"),
                  framework=Credential("scylla", "s3cret-f"), expires_at=NOW + 3600,
                  webhdfs="http://10.0.0.1:9870", zk_hosts=None)


# -- join tokens ----------------------------------------------------------------
def test_a_token_round_trips_and_keeps_every_field() -> None:
    text = encode(TOKEN)
    assert text.startswith(PREFIX + ".") and " " not in text
    assert decode(text, NOW) == TOKEN
    assert decode(f"  {text}\n", NOW) == TOKEN   # pasted from a file with its newline


@pytest.mark.parametrize("mangle,message", [
    (lambda t: t[:-1], "damaged"),
    (lambda t: t[:len(t) // 2], "damaged"),
    (lambda t: t.replace(PREFIX, "scylla-join9"), "not a scylla-singa join token"),
    (lambda t: "SWMTKN-1-abc", "not a scylla-singa join token"),
    (lambda t: t + ".extra", "damaged"),
    (lambda t: "", "not a scylla-singa join token"),
], ids=["last-char-lost", "cut-in-half", "other-version", "a-swarm-token", "extra-part", "empty"])
def test_a_mangled_token_is_refused_saying_how_to_get_a_good_one(mangle, message) -> None:
    with pytest.raises(JoinTokenError, match=message) as err:
        decode(mangle(encode(TOKEN)), NOW)
    assert "scylla-singa cluster token" in str(err.value)


def test_an_expired_token_says_since_when_and_how_to_make_a_new_one() -> None:
    with pytest.raises(JoinTokenError, match=r"expired 10 min ago.*cluster token.*--ttl"):
        decode(encode(TOKEN), TOKEN.expires_at + 600)


def test_a_token_whose_check_matches_but_lacks_a_field_is_refused() -> None:
    import base64
    import hashlib
    import json
    payload = TOKEN.to_payload()
    del payload["swarm_token"]
    body = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    text = f"{PREFIX}.{body}.{hashlib.sha256(body.encode()).hexdigest()[:10]}"
    with pytest.raises(JoinTokenError, match="does not hold what a join needs"):
        decode(text, NOW)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_no_text_makes_decode_fail_other_than_with_a_token_error(text: str) -> None:
    try:
        decode(text, NOW)
    except JoinTokenError:
        pass


def test_the_secrets_never_show_in_a_tokens_repr() -> None:
    assert "s3cret" not in repr(TOKEN)


# -- what a machine offers ------------------------------------------------------------
@pytest.mark.parametrize("facts,bw,expected", [
    (MachineFacts("a", 8, 32768, 100000, 0, 10000), None, "cpus:8;mem:29492;disk:90000;net_bw:10000"),
    (MachineFacts("b", 2, 4096, 20000, 0, None), None, "cpus:2;mem:3072;disk:18000"),
    (MachineFacts("c", 4, 8192, 50000, 2, 1000), 400, "cpus:4;mem:7168;disk:45000;gpus:2;net_bw:400"),
    (MachineFacts("d", 1, 512, 0, 0, None), None, "cpus:1;mem:256;disk:0"),
], ids=["big-vm", "small-vm-no-link-speed", "gpus-and-given-bandwidth", "tiny"])
def test_a_machine_offers_what_it_has_less_what_it_needs_itself(facts, bw, expected) -> None:
    assert offered_resources(facts, bw) == expected


# -- supervision ----------------------------------------------------------------------------
def test_the_systemd_unit_restarts_always_and_quotes_its_arguments() -> None:
    text = unit_text("agent",
                     ["/opt/venv/bin/python", "-m", "scylla_singa", "agent", "--attributes", "host:a;rack:r 1"],
                     {"SCYLLA_HOME": "/var/lib/scylla-singa"})
    assert "Restart=always" in text and "WantedBy=multi-user.target" in text
    assert "ExecStart=/opt/venv/bin/python -m scylla_singa agent --attributes 'host:a;rack:r 1'" in text
    assert "Environment=SCYLLA_HOME=/var/lib/scylla-singa" in text


@pytest.mark.parametrize("previous,ran,expected", [
    (0.0, 0.1, FIRST_BACKOFF_S),
    (FIRST_BACKOFF_S, 0.5, 2 * FIRST_BACKOFF_S),
    (16.0, 1.0, MAX_BACKOFF_S),
    (MAX_BACKOFF_S, 1.0, MAX_BACKOFF_S),
    (MAX_BACKOFF_S, HEALTHY_AFTER_S, FIRST_BACKOFF_S),
], ids=["first-crash", "doubles", "capped", "stays-capped", "reset-after-a-healthy-run"])
def test_restarts_back_off_while_it_keeps_failing_and_reset_after_a_healthy_run(previous, ran, expected) -> None:
    assert next_backoff(previous, ran) == expected


# -- status rows ------------------------------------------------------------------------------
def _agent(host: str, addr: str, active: bool = True, cpus_used: float = 0) -> dict:
    return {"hostname": host, "pid": f"slave(1)@{addr}:5051", "active": active,
            "resources": {"cpus": 2, "mem": 4000}, "used_resources": {"cpus": cpus_used, "mem": 0}}


def _node(host: str, addr: str, state: str) -> dict:
    return {"ID": f"id{host}0000000000", "Description": {"Hostname": host}, "Status": {"Addr": addr, "State": state}}


def test_status_rows_name_each_machine_with_its_role_and_what_is_wrong() -> None:
    state = MemberState(FIRST, "lab", "10.0.0.1", masters=["10.0.0.1:5050"])
    agents = [_agent("vm1", "10.0.0.1"), _agent("vm2", "10.0.0.2", cpus_used=1), _agent("vm3", "10.0.0.3", False)]
    nodes = [_node("vm1", "10.0.0.1", "ready"), _node("vm2", "10.0.0.2", "ready"), _node("vm3", "10.0.0.3", "down"),
             _node("vm4", "10.0.0.4", "down"), _node("vm5", "10.0.0.5", "ready")]
    rows = {r.name: r for r in machine_rows(state, agents, {"master-1": "ok", "hdfs": "unhealthy"}, nodes)}
    assert rows["vm1"].role == "first: master-1, hdfs, agent" and rows["vm1"].health == "hdfs: unhealthy"
    assert rows["vm2"].role == "member: agent" and rows["vm2"].health == "ok"
    assert rows["vm2"].detail.startswith("cpus 1/2")
    assert rows["vm3"].health == "agent inactive (draining or disconnected); swarm node down"
    assert rows["vm4"].role == "left (swarm node down)" and rows["vm4"].health == "ok"
    assert rows["vm5"].health == "no agent registered"


def test_a_member_sees_the_first_machine_as_master_and_agent() -> None:
    state = MemberState(MEMBER, "lab", "10.0.0.2", masters=["10.0.0.1:5050"])
    rows = machine_rows(state, [_agent("vm1", "10.0.0.1"), _agent("vm2", "10.0.0.2")], {}, [])
    assert [(r.name, r.role, r.health) for r in rows] == [("vm1", "first: master, agent", "ok"),
                                                          ("vm2", "member: agent", "ok")]


def test_a_first_machine_without_an_agent_still_has_a_row() -> None:
    state = MemberState(FIRST, "lab", "10.0.0.1", masters=["10.0.0.1:5050"])
    rows = machine_rows(state, [_agent("vm2", "10.0.0.2")], {"master-1": "does not answer (ConnectionError)"}, [])
    assert [(r.address, r.health) for r in rows] == [("10.0.0.2", "ok"),
                                                     ("10.0.0.1", "master-1: does not answer (ConnectionError)")]


# -- the membership record and what `run` reads of it --------------------------------------------
def test_the_membership_record_round_trips_and_tells_run_where_the_cluster_is(tmp_path: Path) -> None:
    path = tmp_path / "machine" / "member.json"
    state = MemberState(MEMBER, "lab", "10.0.0.2", status="member", master="zk://10.0.0.1:2181/mesos",
                        masters=["10.0.0.1:5050"], webhdfs="http://10.0.0.1:9870", zk_hosts="10.0.0.1:2181",
                        swarm="joined", supervised=[Supervised("agent", "process", pidfile="/x/agent.pid")],
                        secrets_dir=str(tmp_path / "machine" / "secrets"), token_id="ab12", path=path)
    state.save()
    again = load_member(tmp_path)
    assert again is not None and again.to_dict() == state.to_dict()
    info = local_cluster(home=tmp_path)
    assert info is not None and info == member_info(again)
    assert (info.master, info.webhdfs, info.zk_hosts, info.shared_files) == \
        ("zk://10.0.0.1:2181/mesos", "http://10.0.0.1:9870", "10.0.0.1:2181", False)
    assert info.credential_file is None   # no secrets written in this test


def test_a_machine_still_joining_or_with_a_broken_record_is_no_cluster_to_run_on(tmp_path: Path) -> None:
    MemberState(MEMBER, "lab", "10.0.0.2", path=tmp_path / "machine" / "member.json").save()
    assert local_cluster(home=tmp_path) is None
    (tmp_path / "machine" / "member.json").write_text("{not json")
    assert local_cluster(home=tmp_path) is None
    with pytest.raises(ValueError, match="cluster leave --force"):
        load_member(tmp_path)


# -- bare machines (`cluster up --machines`) --------------------------------------------------
def test_bare_machines_get_engines_and_images_but_no_swarm_masters_or_agents(tmp_path: Path) -> None:
    cfg = ClusterConfig(nodes=3, agents=False, swarm=False, home=str(tmp_path))
    kinds = [r.kind for r in plan(cfg)]
    assert kinds.count("engine") == 3 and kinds.count("images") == 3
    assert not {"swarm_member", "process", "service", "mesos_master", "mesos_agent"} & set(kinds)


@pytest.mark.parametrize("kw", [{"agents": True}, {"agents": False, "hdfs": True}, {"agents": False, "zk": True}])
def test_bare_machines_refuse_what_init_would_start(kw) -> None:
    with pytest.raises(ConfigError, match="bare machines"):
        ClusterConfig(swarm=False, **kw)


# -- which delivery a run gets ------------------------------------------------------------------
PY, REAL = RuntimeKind("singa-py", "label"), RuntimeKind("apache-singa", "label")
APART = SimpleNamespace(master="10.0.0.1:5050", masters=["10.0.0.1:5050"], webhdfs="http://10.0.0.1:9870",
                        zk_hosts=None, credential_file=None, shared_files=False)
BOX = SimpleNamespace(**{**APART.__dict__, "shared_files": True})


@pytest.mark.parametrize("cluster,kind,given,master,expected", [
    (None, PY, None, None, "volume"),
    (BOX, PY, None, None, "volume"),
    (APART, PY, None, None, "hdfs"),
    (APART, PY, "hdfs", None, "hdfs"),
    (APART, PY, None, "elsewhere:5050", "volume"),   # --master of another cluster: this one does not apply
    (APART, PY, "volume", "elsewhere:5050", "volume"),
], ids=["embedded", "cluster-in-a-box", "machines", "machines-asked-hdfs", "other-master", "other-master-volume"])
def test_delivery_defaults_to_hdfs_only_where_machines_share_no_files(cluster, kind, given, master, expected) -> None:
    opts = RunOptions(deliver=given, master=master)
    resolve_delivery(opts, kind, lambda: cluster)
    assert opts.deliver == expected


@pytest.mark.parametrize("kind,given,message", [
    (PY, "volume", "use --deliver hdfs"),
    (REAL, None, "Apache SINGA 0.3.0, which needs local files"),
    (REAL, "volume", "Apache SINGA 0.3.0, which needs local files"),
], ids=["asked-volume", "real-singa-default", "real-singa-volume"])
def test_volume_delivery_on_machines_that_share_no_files_is_refused_saying_why(kind, given, message) -> None:
    with pytest.raises(UsageError, match="do not see this machine's files") as err:
        resolve_delivery(RunOptions(deliver=given), kind, lambda: APART)
    assert message in str(err.value)


# -- the guard of the services' ports ------------------------------------------------------------
def test_the_guard_chain_lets_trusted_interfaces_and_members_through_and_drops_the_rest() -> None:
    from scylla_singa.cluster.member_guard import CHAIN, chain_rules, jump_rule
    rules = chain_rules({"10.0.0.2", "10.0.0.1"})
    assert rules[:3] == [["-i", "lo", "-j", "RETURN"], ["-i", "docker0", "-j", "RETURN"],
                         ["-i", "docker_gwbridge", "-j", "RETURN"]]
    assert rules[3:] == [["-s", "10.0.0.1/32", "-j", "RETURN"], ["-s", "10.0.0.2/32", "-j", "RETURN"], ["-j", "DROP"]]
    assert jump_rule([9870, 2181]) == ["-p", "tcp", "-m", "multiport", "--dports", "2181,9870", "-j", CHAIN]


def test_the_guard_reads_back_exactly_the_addresses_it_allowed() -> None:
    from scylla_singa.cluster.member_guard import allowed_in
    listing = "\n".join(["-N SCYLLA-GUARD", "-A SCYLLA-GUARD -i lo -j RETURN",
                         "-A SCYLLA-GUARD -s 10.0.0.3/32 -j RETURN", "-A SCYLLA-GUARD -s 10.0.0.1/32 -j RETURN",
                         "-A OTHER -s 10.9.9.9/32 -j RETURN", "-A SCYLLA-GUARD -j DROP"])
    assert allowed_in(listing) == {"10.0.0.1", "10.0.0.3"}


@pytest.mark.parametrize("ttl_s,ok", [(59, False), (60, True), (24 * 3600, True), (30 * 24 * 3600, True),
                                      (31 * 24 * 3600, False)])
def test_a_token_lives_between_a_minute_and_thirty_days(ttl_s: float, ok: bool) -> None:
    from scylla_singa.cluster.first_machine import check_ttl
    from scylla_singa.cluster.membership import MembershipError
    if ok:
        check_ttl(ttl_s)
    else:
        with pytest.raises(MembershipError, match="between 1 minute and 30 days"):
            check_ttl(ttl_s)
