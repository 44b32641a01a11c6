"""What the framework gives Apache SINGA's tasks: the runtime kind, ZooKeeper, attempt numbers, shared workspaces."""

from __future__ import annotations

import io
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from scylla_singa.contracts import ENV_ATTEMPT, ENV_ZK_HOSTS, RUNTIME_APACHE_SINGA, RUNTIME_LABEL, RUNTIME_SINGA_PY
from scylla_singa.delivery.job_files import Artifacts, DeliveryError
from scylla_singa.delivery.volume import ensure_shared_workspace, share_workspace, shared_workspace_path
from scylla_singa.framework.job_zookeeper import (SharedZooKeeper, ZooKeeperError, parse_zk_hosts,
                                                  release_job_zookeeper, split_chroot)
from scylla_singa.framework.model import Job, JobState
from scylla_singa.framework.runtime_kind import RuntimeKindError, runtime_kind
from scylla_singa.framework.session import RunOptions, UsageError, report, resolve_runtime
from scylla_singa.framework.shell import FrameworkShell
from scylla_singa.framework.store import JobStore
from scylla_singa.framework.taskinfo import build_task
from scylla_singa.jobconf.plan import load_plan
from .builders import ARTIFACTS, REPO, spec

DOWNPOUR = "examples/frameworks/downpour.conf"


@pytest.mark.parametrize("choice, labels, want, guessed", [
    ("auto", {RUNTIME_LABEL: "apache-singa"}, RUNTIME_APACHE_SINGA, False),
    ("auto", {RUNTIME_LABEL: "singa-py"}, RUNTIME_SINGA_PY, False),
    ("auto", {}, RUNTIME_SINGA_PY, True),                       # unlabelled: the base contract
    ("auto", None, RUNTIME_SINGA_PY, True),                     # not on this engine
    ("apache-singa", None, RUNTIME_APACHE_SINGA, False),       # said by the user
    ("singa-py", {RUNTIME_LABEL: "apache-singa"}, RUNTIME_SINGA_PY, False),
], ids=["label-apache", "label-py", "no-label", "not-local", "option-apache", "option-wins"])
def test_the_runtime_comes_from_the_image_label_or_the_option(choice, labels, want, guessed) -> None:
    kind = runtime_kind(choice, "img:1", labels)
    assert (kind.name, kind.guessed) == (want, guessed)
    assert kind.apache_singa is (want == RUNTIME_APACHE_SINGA)


def test_an_unknown_runtime_label_is_refused_saying_what_to_give() -> None:
    with pytest.raises(RuntimeKindError, match=r"img:1 says io\.scylla\.runtime=caffe.*--runtime apache-singa"):
        runtime_kind("auto", "img:1", {RUNTIME_LABEL: "caffe"})


def real_singa_labels(image: str) -> dict[str, str]:
    return {RUNTIME_LABEL: RUNTIME_APACHE_SINGA}


@pytest.mark.parametrize("opts, says", [
    (RunOptions(deliver="hdfs", hdfs="http://nn:9870"), "Apache SINGA 0.3.0, which writes its checkpoints to local"),
    (RunOptions(zk="zk://h:2181/mesos"), "expected host:port"),
    (RunOptions(zk="h:2181,"), "expected host:port"),
    (RunOptions(workspace_dir=Path("/tmp/x"), deliver="hdfs", runtime="singa-py"), "--workspace .* --deliver volume"),
], ids=["hdfs-workspace", "zk-url", "zk-empty-host", "workspace-hdfs"])
def test_what_real_singa_cannot_do_is_refused_before_anything_starts(opts: RunOptions, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        resolve_runtime(opts, real_singa_labels)


def test_zk_hosts_are_normalised() -> None:
    opts = RunOptions(zk=" 10.0.0.1:2181, zk2:2182 ")
    assert resolve_runtime(opts, real_singa_labels).apache_singa and opts.zk == "10.0.0.1:2181,zk2:2182"


@pytest.mark.parametrize("connect, split", [
    ("h:2181", ("h:2181", "")),
    ("h1:2181,h2:2181/scylla/jobs/j1", ("h1:2181,h2:2181", "/scylla/jobs/j1")),
])
def test_a_connect_string_splits_into_hosts_and_chroot(connect: str, split) -> None:
    assert split_chroot(connect) == split
    assert parse_zk_hosts(split[0]) == split[0]


def test_real_singa_tasks_get_the_gangs_attempt_and_the_jobs_zookeeper() -> None:
    plan = load_plan(REPO / DOWNPOUR)
    artifacts = replace(ARTIFACTS, env=((ENV_ZK_HOSTS, "j1-zk:2181"),))
    real = replace(spec(DOWNPOUR), runtime=RUNTIME_APACHE_SINGA)
    envs = [{v["name"]: v["value"] for v in build_task(s, plan.procs[1], 3, "a", artifacts)["command"]["environment"]
             ["variables"]} for s in (real, spec(DOWNPOUR))]
    assert envs[0][ENV_ATTEMPT] == "3" and envs[0][ENV_ZK_HOSTS] == "j1-zk:2181"
    assert ENV_ATTEMPT not in envs[1]   # the Python runtime has no use for it


class FakeZooKeeper:
    def __init__(self) -> None:
        self.prepared: list[tuple[str, str]] = []

    def prepare(self, job_id: str, network: str) -> str:
        self.prepared.append((job_id, network))
        return f"zk:2181/scylla/jobs/{job_id}"


@pytest.mark.parametrize("conf, runtime, wanted", [
    (DOWNPOUR, RUNTIME_APACHE_SINGA, True),
    ("examples/digits-mlp/job.conf", RUNTIME_APACHE_SINGA, False),   # one process: singa-local, no ZooKeeper
    (DOWNPOUR, RUNTIME_SINGA_PY, False),
])
def test_a_zookeeper_is_prepared_only_for_real_singa_jobs_of_several_processes(conf, runtime, wanted) -> None:
    zk = FakeZooKeeper()
    shell = FrameworkShell(None, None, None, None, None, zookeeper=zk)
    job = Job(replace(spec(conf), runtime=runtime), load_plan(REPO / conf))
    env = dict(shell._for_runtime(job, ARTIFACTS).env)
    assert (ENV_ZK_HOSTS in env) is wanted and bool(zk.prepared) is wanted
    if wanted:
        assert env[ENV_ZK_HOSTS] == "zk:2181/scylla/jobs/j1" and zk.prepared == [("j1", ARTIFACTS.network)]


def test_without_a_zookeeper_a_real_singa_gang_fails_to_prepare_saying_so() -> None:
    shell = FrameworkShell(None, None, None, None, None)
    job = Job(replace(spec(DOWNPOUR), runtime=RUNTIME_APACHE_SINGA), load_plan(REPO / DOWNPOUR))
    with pytest.raises(ZooKeeperError, match="no ZooKeeper to give a real SINGA job of 6 processes"):
        shell._for_runtime(job, ARTIFACTS)


@pytest.mark.parametrize("conf_workspace, inside", [
    ("/workspace/rbm1", "/workspace/rbm1"),
    ("/workspace/rbm1/", "/workspace/rbm1"),
    ("examples/rbm/rbm1", "/workspace"),       # SINGA's own relative workspaces: the mount itself
    ("/workspace", "/workspace"),
    ("/workspace/../etc", "/workspace"),
    ("", "/workspace"),
])
def test_a_job_in_a_shared_workspace_works_in_its_confs_own_directory(conf_workspace: str, inside: str) -> None:
    assert shared_workspace_path(conf_workspace) == inside


def test_a_shared_workspace_replaces_the_jobs_own_mount(tmp_path: Path) -> None:
    artifacts = Artifacts("net", volumes=({"container_path": "job.conf", "host_path": "/j/job.conf", "mode": "RO"},
                                          {"container_path": "/workspace", "host_path": "/j/workspace", "mode": "RW"}))
    shared = share_workspace(artifacts, tmp_path, "/workspace/rbm2")
    assert shared.workspace == "/workspace/rbm2"
    assert [v["host_path"] for v in shared.volumes] == ["/j/job.conf", str(tmp_path)]


def test_a_shared_workspace_is_made_writable_under_an_allowed_root_and_refused_elsewhere(tmp_path: Path) -> None:
    made = ensure_shared_workspace(tmp_path / "jobs" / "chain", (tmp_path / "jobs",))
    assert made.is_dir() and stat.S_IMODE(made.stat().st_mode) == 0o1777
    with pytest.raises(DeliveryError, match="outside the allowed roots"):
        ensure_shared_workspace(tmp_path / "elsewhere", (tmp_path / "jobs",))


class FakeKazoo:
    """Just enough of kazoo's client: the paths it holds, and whether it answers."""

    def __init__(self, nodes: set[str], answers: bool = True) -> None:
        self.nodes, self.answers = nodes, answers

    def start(self, timeout: float) -> None:
        if not self.answers:
            raise TimeoutError("Connection time-out")

    def ensure_path(self, path: str) -> None:
        parts = path.strip("/").split("/")
        self.nodes |= {"/" + "/".join(parts[:i + 1]) for i in range(len(parts))}

    def delete(self, path: str, recursive: bool = False) -> None:
        self.nodes -= {n for n in self.nodes if n == path or n.startswith(path + "/")}

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_shared_zookeeper_gives_each_job_a_chroot_and_removes_it_at_the_end() -> None:
    nodes = {"/mesos", "/mesos/json.info_0000000001", "/scylla", "/scylla/jobs", "/scylla/jobs/other"}
    shared = SharedZooKeeper("zk:2181", lambda hosts: FakeKazoo(nodes))
    connect = shared.prepare("j1", "net")
    assert connect == "zk:2181/scylla/jobs/j1" and "/scylla/jobs/j1" in nodes
    nodes.add("/scylla/jobs/j1/singa/app/job-0000000000")
    release_job_zookeeper(connect, "j1", None, lambda hosts: FakeKazoo(nodes))
    assert nodes == {"/mesos", "/mesos/json.info_0000000001", "/scylla", "/scylla/jobs", "/scylla/jobs/other"}
    with pytest.raises(ZooKeeperError, match="not job j1's"):
        release_job_zookeeper("zk:2181/mesos", "j1", None, lambda hosts: FakeKazoo(nodes))


def test_a_shared_zookeeper_that_does_not_answer_is_named() -> None:
    with pytest.raises(ZooKeeperError, match=r"ZooKeeper at zk:2181 does not answer.*--zk"):
        SharedZooKeeper("zk:2181", lambda hosts: FakeKazoo(set(), answers=False)).prepare("j1", "net")


def test_the_new_spec_fields_survive_the_store(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "s.sqlite")
    s = replace(spec(DOWNPOUR), runtime=RUNTIME_APACHE_SINGA, workspace_dir="/srv/jobs/chain", env=(("A", "1"),))
    store.save(Job(s, load_plan(REPO / DOWNPOUR)), "fw")
    loaded = store.load("j1").spec
    assert (loaded.runtime, loaded.workspace_dir, loaded.apache_singa) == (RUNTIME_APACHE_SINGA, "/srv/jobs/chain", True)
    assert loaded.env == (("A", "1"),)


def test_the_summary_says_which_step_real_singa_last_tested() -> None:
    job = Job(spec(), load_plan(REPO / "examples/digits-mlp/job.conf"), JobState.FINISHED)
    job.result["final"] = {"steps": 600, "test_accuracy": 0.9694, "test_step": 400}
    out = io.StringIO()
    assert report([job], Console(file=out, width=200), as_json=False) == 0
    assert "j1: FINISHED after 600 steps, test accuracy 0.969 (tested at step 400), restarts 0" in out.getvalue()


def test_run_env_reaches_every_task_but_cannot_change_what_the_framework_sets() -> None:
    from scylla_singa.framework.session import parse_env

    env = parse_env(("SCYLLA_SINGA_LOCAL_BIN=singa-rnnlm", "EMPTY=", "A=b=c"))
    assert env == (("SCYLLA_SINGA_LOCAL_BIN", "singa-rnnlm"), ("EMPTY", ""), ("A", "b=c"))
    task = build_task(replace(spec(), env=env), load_plan(REPO / "examples/digits-mlp/job.conf").procs[0], 1, "a",
                      ARTIFACTS)
    got = {v["name"]: v["value"] for v in task["command"]["environment"]["variables"]}
    assert got["SCYLLA_SINGA_LOCAL_BIN"] == "singa-rnnlm" and got["A"] == "b=c"
    for bad, says in (("NOEQUALS", "expected NAME=VALUE"), ("1X=2", "expected NAME=VALUE"),
                      ("SCYLLA_PROC_ID=3", "the framework sets SCYLLA_PROC_ID itself"),
                      ("SCYLLA_ZK_HOSTS=h:1", "the framework sets SCYLLA_ZK_HOSTS itself")):
        with pytest.raises(UsageError, match=says):
            parse_env((bad,))
