"""Authentication and authorization, tried as an attacker on the same network would (issue 14, items 1 and 2).

Every cluster here is secure the way the product is by default: an
EmbeddedMesos makes its own framework and agent secrets, `scylla-singa
master` makes its own on first start. The attacker knows every id the
cluster shows (framework and agent ids are in /master/state) but not the
secrets.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import AGENT_PRINCIPAL, Credential, load_credential, load_credentials
from scylla_singa.mesos.api.protocol import make_status
from scylla_singa.mesos.embedded import EmbeddedMesos
from scylla_singa.mesos.master.acls import parse_acls
from scylla_singa.ui import master_page
from tests.security.agent_fixtures import frameworks  # noqa: F401 - a fixture
from tests.support.agent_link import agent_link_exchange
from tests.support.mesos_framework import task_info

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "scylla_singa"]
SUBSCRIBE = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "nobody", "name": "attacker"}}}


@pytest.fixture
def secure() -> Iterator[Any]:
    """`secure(**kw)`: a started EmbeddedMesos with its defaults (authentication on), simulated agents."""
    made: list[EmbeddedMesos] = []

    def make(agents: Any = 1, **kw: Any) -> EmbeddedMesos:
        kw.setdefault("simulate", True)
        kw.setdefault("allocation_interval", 0.2)
        kw.setdefault("retry_interval", 0.5)
        m = EmbeddedMesos(agents, master_routes=[master_page.routes], **kw)
        made.append(m)
        return m.start()
    yield make
    for m in made:
        m.stop()


def _framework_state(m: EmbeddedMesos, fw_id: str) -> dict[str, Any]:
    state = requests.get(f"http://{m.master_address}/master/state", auth=m.http_auth, timeout=10).json()
    return next(f for f in state["frameworks"] if f["id"] == fw_id)


# ---- who may call what ---------------------------------------------------------------------------------------
MASTER_READS = ["/master/state", "/state", "/state-summary", "/master/slaves", "/master/frameworks", "/master/tasks",
                "/master/roles", "/master/flags", "/metrics/snapshot", "/metrics", "/", "/ui/state",
                "/ui/api/log?agent=a&task=t"]
AGENT_READS = ["/state", "/slave(1)/state", "/flags", "/containers", "/metrics/snapshot", "/monitor/statistics",
               "/files/browse?path=/", "/files/read?path=/etc/passwd&offset=0"]


def test_every_endpoint_that_reveals_or_changes_anything_asks_for_credentials(secure) -> None:
    """Attack: read the cluster's state, tasks, metrics, web UI, logs and sandboxes, or call the operator API,
    without credentials, or with a wrong secret."""
    m = secure(1, simulate=False, use_docker=False)
    cred = m.framework_credential
    wrong = (cred.principal, "not-the-secret")
    for path in MASTER_READS:
        url = f"http://{m.master_address}{path}"
        for auth in (None, wrong):
            r = requests.get(url, auth=auth, timeout=10)
            assert r.status_code == 401 and r.headers["WWW-Authenticate"] == 'Basic realm="mesos"', (path, auth)
            assert "needs HTTP Basic credentials" in r.text, r.text
        assert requests.get(url, auth=m.http_auth, timeout=10).status_code != 401, path
    for path in AGENT_READS:
        url = f"http://{m.agent_addresses[0]}{path}"
        assert requests.get(url, timeout=10).status_code == 401, path
        assert requests.get(url, auth=m.http_auth, timeout=10).status_code != 401, path
    operator = {"type": "GET_STATE"}
    for address in (m.master_address, m.agent_addresses[0]):
        assert requests.post(f"http://{address}/api/v1", json=operator, timeout=10).status_code == 401
        assert requests.post(f"http://{address}/api/v1", json=operator, auth=m.http_auth, timeout=10).status_code == 200
    # what reveals nothing stays open, as on Mesos: load balancers and probes need it
    for path in ("/health", "/master/health", "/version"):
        assert requests.get(f"http://{m.master_address}{path}", timeout=10).status_code == 200, path
    assert requests.get(f"http://{m.agent_addresses[0]}/health", timeout=10).status_code == 200


def test_an_anonymous_framework_cannot_subscribe(secure) -> None:
    """Attack: register a framework without credentials (then launch tasks as any user)."""
    m = secure()
    url = f"http://{m.master_address}/api/v1/scheduler"
    r = requests.post(url, json=SUBSCRIBE, timeout=10)
    assert r.status_code == 401 and "frameworks authenticate" in r.text
    r = requests.post(url, json=SUBSCRIBE, auth=("scylla", "guess"), timeout=10)
    assert r.status_code == 401
    state = requests.get(f"http://{m.master_address}/master/state", auth=m.http_auth, timeout=10).json()
    assert state["frameworks"] == []


def test_another_principal_cannot_take_over_a_framework(secure, frameworks) -> None:
    """Attack: SUBSCRIBE with a victim's framework id (public in /master/state) under another principal, to
    fail the victim over and then kill or tear down its tasks."""
    m = secure(1, credentials={"alice": "alice-secret", "bob": "bob-secret"})
    alice = frameworks(m.master_address, name="alice-fw", principal="alice", secret="alice-secret")
    offer = alice.take_offer()
    task = task_info(offer["agent_id"], cpus=1)
    alice.launch(offer, [task])
    alice.wait_state(task["task_id"]["value"], "TASK_RUNNING")
    body = {"type": "SUBSCRIBE", "framework_id": {"value": alice.id},
            "subscribe": {"framework_info": {"user": "nobody", "name": "bob-fw", "id": {"value": alice.id}}}}
    r = requests.post(f"http://{m.master_address}/api/v1/scheduler", json=body, auth=("bob", "bob-secret"),
                      timeout=10)
    assert r.status_code == 400, r.text
    assert f"Framework {alice.id} was registered by principal 'alice'" in r.text
    assert "principal 'bob' cannot subscribe as it" in r.text
    fw = _framework_state(m, alice.id)
    assert fw["active"] and fw["principal"] == "alice" and fw["name"] == "alice-fw"   # not failed over
    assert [t["state"] for t in fw["tasks"]] == ["TASK_RUNNING"]
    teardown = {"type": "TEARDOWN", "framework_id": {"value": alice.id}}
    r = requests.post(f"http://{m.master_address}/api/v1/scheduler", json=teardown, auth=("bob", "bob-secret"),
                      timeout=10)
    assert r.status_code == 400 and "does not match" in r.text, r.text
    assert _framework_state(m, alice.id)["active"]


def test_a_forged_agent_is_refused_and_a_foreign_link_cannot_speak_for_a_real_agent(secure, frameworks) -> None:
    """Attack: open an agent link (anonymously, or with another agent principal), send TASK_FINISHED for a task
    that runs on a real agent (to free its resources), and re-register with the real agent's id (to receive
    its next RUN_TASK and the secrets in its environment)."""
    m = secure(1, credentials={"scylla": "fw-secret", "rogue-agent": "rogue-secret"})
    fw = frameworks(m.master_address, credential=m.framework_credential)
    offer = fw.take_offer()
    agent_id = offer["agent_id"]["value"]
    task = task_info(agent_id, cpus=1)
    tid = task["task_id"]["value"]
    fw.launch(offer, [task])
    fw.wait_state(tid, "TASK_RUNNING")
    forged = {"type": "STATUS", "framework_id": fw.id, "agent_id": agent_id,
              "status": make_status(tid, "TASK_FINISHED", agent_id=agent_id, uuid_b64="Zm9yZ2VkMTIzNDU2Nzg5MA==")}

    status, _ = agent_link_exchange(m.master_address, None, [forged])
    assert status == 401                                                   # no credential: no link at all
    rogue = Credential("rogue-agent", "rogue-secret")
    status, answers = agent_link_exchange(m.master_address, rogue, [forged], listen_s=1.0)
    assert status == 101 and answers == []
    fw_state = _framework_state(m, fw.id)
    assert [t["state"] for t in fw_state["tasks"]] == ["TASK_RUNNING"]     # not believed
    assert fw_state["used_resources"]["cpus"] == 1                        # its cpus are not freed
    assert fw.sched.states(tid) == ["TASK_STARTING", "TASK_RUNNING"]      # the framework heard nothing

    real = m.agents[0].core
    takeover = {**real.registration(), "ref": "rogue-1"}
    status, answers = agent_link_exchange(m.master_address, rogue, [takeover])
    refusal = next(a for a in answers if a["type"] == "REREGISTER_REFUSED")
    assert f"Agent {agent_id} was registered by principal '{AGENT_PRINCIPAL}'" in refusal["message"]
    assert not any(a["type"] in ("REGISTERED", "RUN_TASK") for a in answers), answers
    master = m.server.master
    assert master.agent_registry.agents[agent_id].principal == AGENT_PRINCIPAL
    # the real agent keeps its link: the next task still goes to it and runs
    offer = fw.take_offer()
    second = task_info(offer["agent_id"], cpus=1)
    fw.launch(offer, [second])
    fw.wait_state(second["task_id"]["value"], "TASK_RUNNING")
    assert second["task_id"]["value"] in {t.info["task_id"]["value"] for t in real.tasks.values()}


def test_read_only_authentication_can_be_turned_off_but_writes_still_need_credentials(secure) -> None:
    """As Mesos's --authenticate_http_readonly=false: the views open, the scheduler and operator APIs not."""
    m = secure(1, authenticate_readonly=False)
    assert requests.get(f"http://{m.master_address}/master/state", timeout=10).status_code == 200
    assert requests.post(f"http://{m.master_address}/api/v1", json={"type": "GET_STATE"},
                         timeout=10).status_code == 401
    assert requests.post(f"http://{m.master_address}/api/v1/scheduler", json=SUBSCRIBE,
                         timeout=10).status_code == 401
    flags = requests.get(f"http://{m.master_address}/master/flags", timeout=10).json()["flags"]
    assert flags["authenticate_http_readonly"] == "false" and flags["authenticate_frameworks"] == "true"


# ---- ACLs ----------------------------------------------------------------------------------------------------
ACLS = {"permissive": False,
        "register_frameworks": [{"principals": ["alice"], "roles": ["*", "dev"]}, {"principals": ["ops"]}],
        "run_tasks": [{"principals": ["alice"], "users": ["nobody"]}],
        "teardown_frameworks": [{"principals": ["ops"], "framework_principals": "ANY"}],
        "register_agents": [{"principals": [AGENT_PRINCIPAL]}]}


def test_acls_decide_roles_users_and_teardowns(secure, frameworks) -> None:
    """Attack: register in a role one may not use, run a task as root, tear down someone else's framework."""
    creds = {"alice": "a-secret", "mallory": "m-secret", "ops": "o-secret"}
    m = secure(1, credentials=creds, acls=parse_acls(ACLS, "acls.yaml"))
    url = f"http://{m.master_address}/api/v1/scheduler"
    prod = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "nobody", "name": "x", "roles": ["prod"],
                                                                  "capabilities": [{"type": "MULTI_ROLE"}]}}}
    r = requests.post(url, json=prod, auth=("alice", "a-secret"), timeout=10)
    assert r.status_code == 403 and "not authorized to register frameworks in role 'prod'" in r.text
    r = requests.post(url, json=SUBSCRIBE, auth=("mallory", "m-secret"), timeout=10)
    assert r.status_code == 403 and "Principal 'mallory'" in r.text

    alice = frameworks(m.master_address, principal="alice", secret="a-secret")
    offer = alice.take_offer()
    as_root = task_info(offer["agent_id"], cpus=0.5)
    as_root["command"]["user"] = "root"
    alice.launch(offer, [as_root])
    error = alice.wait_state(as_root["task_id"]["value"], "TASK_ERROR")
    assert "not authorized to launch tasks as user 'root'" in error["message"]
    offer = alice.take_offer()   # the refused launch's cpus came back
    as_nobody = task_info(offer["agent_id"], cpus=0.5)
    as_nobody["command"]["user"] = "nobody"
    alice.launch(offer, [as_nobody])
    alice.wait_state(as_nobody["task_id"]["value"], "TASK_RUNNING")

    teardown = {"type": "TEARDOWN", "teardown": {"framework_id": {"value": alice.id}}}
    r = requests.post(f"http://{m.master_address}/api/v1", json=teardown, auth=("mallory", "m-secret"), timeout=10)
    assert r.status_code == 403 and "not authorized to tear down framework" in r.text
    assert _framework_state(m, alice.id)["active"]
    r = requests.post(f"http://{m.master_address}/api/v1", json=teardown, auth=("ops", "o-secret"), timeout=10)
    assert r.status_code == 200, r.text

    status, answers = agent_link_exchange(m.master_address, Credential("mallory", "m-secret"),
                                          [{**m.agents[0].core.registration(), "ref": "x"}])
    refusal = next(a for a in answers if a["type"] == "REGISTER_REFUSED")
    assert "not authorized to register agents" in refusal["message"]


def test_acls_decide_who_reserves_for_which_role_and_who_unreserves(secure) -> None:
    """Attack: reserve an agent's resources for a role one may not reserve for, or take back another's."""
    creds = {"ops": "o-secret", "mallory": "m-secret"}
    acls = parse_acls({"permissive": False, "register_agents": [{"principals": "ANY"}],
                       "reserve_resources": [{"principals": ["ops"], "roles": ["ml"]}],
                       "unreserve_resources": [{"principals": ["ops"], "reserver_principals": ["ops"]}]},
                      "acls.yaml")
    m = secure(1, credentials=creds, acls=acls)
    state = requests.get(f"http://{m.master_address}/master/state", auth=m.http_auth, timeout=10).json()
    agent_id = state["slaves"][0]["id"]

    def call(kind: str, role: str, who: str) -> requests.Response:
        resources = [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.5},
                      "reservations": [{"type": "DYNAMIC", "role": role, "principal": "ops"}]}]
        return requests.post(f"http://{m.master_address}/api/v1", json={
            "type": kind, kind.lower(): {"agent_id": {"value": agent_id}, "resources": resources}},
            auth=(who, creds[who]), timeout=10)
    refused = call("RESERVE_RESOURCES", "ml", "mallory")
    assert refused.status_code == 403 and refused.text == (
        "Not authorized: principal 'mallory' may not reserve resources for role 'ml' (ACL reserve_resources)")
    assert call("RESERVE_RESOURCES", "web", "ops").status_code == 403
    assert call("RESERVE_RESOURCES", "ml", "ops").status_code == 202
    refused = call("UNRESERVE_RESOURCES", "ml", "mallory")
    assert refused.status_code == 403 and "may not unreserve resources reserved by principal 'ops'" in refused.text
    state = requests.get(f"http://{m.master_address}/master/state", auth=m.http_auth, timeout=10).json()
    assert state["slaves"][0]["reserved_resources"]["ml"]["cpus"] == 0.5   # still reserved
    assert call("UNRESERVE_RESOURCES", "ml", "ops").status_code == 202


# ---- the master's command line: secrets made on first start, never on a command line ---------------------------
def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    out = open(log, "w")
    return subprocess.Popen(CLI + argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _stop(p: subprocess.Popen) -> None:
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)


def test_a_master_makes_its_secrets_on_first_start_and_an_agent_on_its_machine_uses_them(tmp_path) -> None:
    """`scylla-singa master` with no flags is secure: it writes 0600 credentials in its work dir, refuses
    anonymous frameworks and agents, and no secret appears on any command line or in any log."""
    env = {**os.environ, "SCYLLA_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"}
    procs = []
    try:
        master_log = tmp_path / "master.log"
        master = _start(["master", "--host", "127.0.0.1", "--port", "0"], env, master_log)
        procs.append(master)
        found = wait_until(lambda: re.search(r"master listening on (\S+)", master_log.read_text()), 60,
                           "the master to listen")
        address = found.group(1)
        work = tmp_path / "home" / "master"
        for name in ("credentials.json", "framework.credential", "agent.credential"):
            assert (work / name).stat().st_mode & 0o777 == 0o600, name
        made = load_credentials(work / "credentials.json")
        secrets = list(made.values())
        assert sorted(made) == ["scylla", AGENT_PRINCIPAL] and all(len(s) >= 32 for s in secrets)
        assert requests.post(f"http://{address}/api/v1/scheduler", json=SUBSCRIBE, timeout=10).status_code == 401
        anonymous_log = tmp_path / "anonymous-agent.log"
        refused = _start(["agent", "--master", address, "--simulate", "--host", "127.0.0.1", "--port", "0",
                          "--work-dir", str(tmp_path / "anon"), "--insecure"], env, anonymous_log)
        procs.append(refused)
        wait_until(lambda: "refused this agent's credential (401)" in anonymous_log.read_text(), 60,
                   "the anonymous agent to be told why it is refused")
        agent_log = tmp_path / "agent.log"
        procs.append(_start(["agent", "--master", address, "--simulate", "--host", "127.0.0.1", "--port", "0"],
                            env, agent_log))
        fw = load_credential(work / "framework.credential")
        assert fw == Credential("scylla", made["scylla"])
        assert load_credential(work / "agent.credential").secret == made[AGENT_PRINCIPAL]

        def registered() -> list[dict[str, Any]]:
            state = requests.get(f"http://{address}/master/state", headers=fw.headers(), timeout=10).json()
            return state["slaves"]
        [agent] = wait_until(registered, 60, "the agent (with the master's agent.credential) to register")
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        for secret in secrets:
            assert secret not in ps
            for log in (master_log, agent_log, anonymous_log):
                assert secret not in log.read_text(), log
    finally:
        for p in procs:
            _stop(p)


def test_run_against_a_secure_master_without_its_credential_says_where_credentials_come_from(secure, tmp_path) -> None:
    """A framework that forgot its credential (or has a wrong one) gets exit 2 and the places to put one,
    not a traceback; with the credential in SCYLLA_CREDENTIAL it subscribes."""
    m = secure()
    env = {**os.environ, "SCYLLA_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"}
    env.pop("SCYLLA_CREDENTIAL", None)
    conf = str(REPO / "examples" / "digits-mlp" / "job.conf")
    r = subprocess.run(CLI + ["run", "--master", m.master_address, "--connect-timeout", "20s", conf], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "refused this framework's credentials (none given)" in r.stderr and "--credential FILE" in r.stderr
    assert "Traceback" not in r.stderr
    wrong = tmp_path / "wrong.credential"
    wrong.write_text("scylla not-the-secret\n")
    r = subprocess.run(CLI + ["run", "--master", m.master_address, "--credential", str(wrong),
                              "--connect-timeout", "20s", conf], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "(principal scylla)" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
