"""Real Docker tasks through pymesos, the embedded master and a Docker agent (image scylla-tiny)."""

from __future__ import annotations

import shutil
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
import requests

from scylla_singa.common.home import scylla_home
from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.container_info import SANDBOX_MOUNT
from scylla_singa.mesos.embedded import EmbeddedMesos
from scylla_singa.swarm.overlays import create_job_network, remove_job_network
from tests.support import v1_executor
from tests.support.mesos_framework import TestFramework, task_info

TINY = "scylla-tiny:latest"


@pytest.fixture(scope="module")
def jobs_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("jobs")
    (root / "j1").mkdir()
    (root / "j1" / "input.txt").write_text("mounted\n")
    return root


@pytest.fixture(scope="module")
def mesos(docker_client, jobs_root) -> Iterator[EmbeddedMesos]:
    m = EmbeddedMesos([{"resources": "cpus:8;mem:8192;ports:[31000-31100]", "hostname": "dock"}],
                      docker_client=docker_client, allowed_host_paths=[jobs_root], allocation_interval=0.2,
                      retry_interval=0.5)
    with m:
        yield m
        agent_ids = [a.agent_id for a in m.agents]
    for agent_id in agent_ids:  # stopping the cluster removed every container of its agents
        assert not docker_client.containers.list(ignore_removed=True, all=True,
                                                 filters={"label": f"scylla.agent={agent_id}"})


@pytest.fixture(scope="module")
def fw(mesos) -> Iterator[TestFramework]:
    f = TestFramework(mesos.master_address, name="docker-tests", credential=mesos.framework_credential).start()
    yield f
    f.stop()


def _run(fw: TestFramework, final: str | tuple[str, ...], command: str, **kw) -> tuple[dict, dict]:
    offer = fw.take_offer(cpus=1, mem=256)
    task = task_info(offer["agent_id"], command=command, image=kw.pop("image", TINY), **kw)
    fw.launch(offer, [task])
    status = fw.wait_state(task["task_id"]["value"], (final,) if isinstance(final, str) else final + ("TASK_ERROR", "TASK_LOST"), timeout=60)
    return task, status


def _sandbox(mesos: EmbeddedMesos, task_id: str) -> Path:
    state = requests.get(f"http://{mesos.agent_addresses[0]}/state", timeout=10, auth=mesos.http_auth).json()
    for group in ("frameworks", "completed_frameworks"):
        for f in state[group]:
            for ex in f["executors"] + f["completed_executors"]:
                if ex["id"] == task_id:
                    return Path(ex["directory"])
    raise AssertionError(f"{task_id} not in /state")


def _containers(client: docker.DockerClient, task_id: str) -> list:
    return client.containers.list(ignore_removed=True, all=True, filters={"label": f"scylla.task={task_id}"})


def test_a_non_root_task_cannot_touch_its_root_owned_sandbox_as_under_apache_mesos(mesos, fw, docker_client) -> None:
    cmd = ('echo "uid=$(id -u) pwd=$(pwd) sb=$MESOS_SANDBOX task=$MESOS_TASK_ID fw=$MESOS_FRAMEWORK_ID"; '
           'if ls /mnt/mesos/sandbox >/dev/null 2>&1 || (echo x > /mnt/mesos/sandbox/out.txt) 2>/dev/null; then exit 1; fi; '
           'echo warn >&2')
    task, status = _run(fw, "TASK_FINISHED", cmd, env={"X": "1"})
    tid = task["task_id"]["value"]
    assert fw.sched.states(tid) == ["TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"]
    sandbox = _sandbox(mesos, tid)
    st = sandbox.stat()
    assert (st.st_uid, st.st_mode & 0o777) == (0, 0o750) and not (sandbox / "out.txt").exists()
    read = requests.get(f"http://{mesos.agent_addresses[0]}/files/read", auth=mesos.http_auth,
                        params={"path": str(sandbox / "stdout"), "offset": 0}, timeout=10).json()
    # The working directory is the image's own (busybox: /), as Mesos's Docker containerizer leaves it.
    assert read["data"] == f"uid=65534 pwd=/ sb=/mnt/mesos/sandbox task={tid} fw={fw.id}\n"
    assert (sandbox / "stderr").read_text() == "warn\n"
    fw.sched.wait(lambda: not _containers(docker_client, tid), what="the container to be removed")


def test_a_mesos_container_with_a_docker_image_runs_on_the_engine(mesos, fw, docker_client) -> None:
    """ContainerInfo MESOS with a Docker image (how mesoshttp's and avmesos's samples ask for one): the image's
    filesystem, the host's network, the sandbox mounted, as the Mesos containerizer would run it."""
    offer = fw.take_offer(cpus=1, mem=256)
    task = task_info(offer["agent_id"], command='echo "$(pwd) $MESOS_SANDBOX $(hostname)"')
    task["container"] = {"type": "MESOS", "mesos": {"image": {"type": "DOCKER", "docker": {"name": TINY}}}}
    fw.launch(offer, [task])
    tid = task["task_id"]["value"]
    status = fw.wait_state(tid, ("TASK_FINISHED", "TASK_FAILED", "TASK_ERROR"), timeout=60)
    assert status["state"] == "TASK_FINISHED", status.get("message")
    # in the container, started in the sandbox at its mount point (as the Mesos containerizer starts it), on
    # the host's network (the host's name); like every sandbox it is root's, 0750 (its stdout is the agent's)
    assert (_sandbox(mesos, tid) / "stdout").read_text() == f"{SANDBOX_MOUNT} {SANDBOX_MOUNT} {socket.gethostname()}\n"
    fw.sched.wait(lambda: not _containers(docker_client, tid), what="the container to be removed")


def test_a_custom_executor_in_a_docker_container_runs_and_shuts_down(mesos, fw, docker_client) -> None:
    """An ExecutorInfo with a DOCKER container: the executor runs in it on the host's network (so it reaches the
    agent's /api/v1/executor), gets its task, and ends on SHUTDOWN; its container is removed."""
    offer = fw.take_offer(cpus=1, mem=256)
    executor_id = f"in-docker-{uuid.uuid4().hex[:6]}"
    # the agent fetches local files only from its fetcher roots (by default the jobs root)
    script = scylla_home() / "jobs" / executor_id / "v1_executor.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(v1_executor.__file__, script)
    executor = {"type": "CUSTOM", "executor_id": {"value": executor_id},
                "command": {"value": "python3 v1_executor.py", "uris": [{"value": str(script)}],
                            "environment": {"variables": [{"name": "EXECUTOR_OUTPUT_DIR", "value": "/tmp"}]}},
                # The sandbox is root's and 0750, as Apache Mesos makes it: the executor (the image's non-root
                # user) reads its fetched script as a member of group 0, the arbitrary-uid convention.
                "container": {"type": "DOCKER", "docker": {"image": "singa-py:latest", "network": "BRIDGE",
                                                           "parameters": [{"key": "user", "value": "1000:0"}]}},
                "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}},
                              {"name": "mem", "type": "SCALAR", "scalar": {"value": 64}}]}
    task = task_info(offer["agent_id"])
    del task["command"]
    task["executor"] = executor
    fw.launch(offer, [task])
    tid = task["task_id"]["value"]
    running = fw.wait_state(tid, ("TASK_RUNNING", "TASK_FAILED", "TASK_ERROR"), timeout=60)
    if running["state"] != "TASK_RUNNING":
        sandbox = _sandbox(mesos, executor_id)
        pytest.fail(f"{running.get('message')}; the executor's stderr: {(sandbox / 'stderr').read_text()[-2000:]}; "
                    f"sandbox: {sorted((p.name, oct(p.stat().st_mode)) for p in sandbox.iterdir())}")
    assert running["source"] == "SOURCE_EXECUTOR", running
    [container] = _containers(docker_client, f"executor:{executor_id}")
    assert container.attrs["HostConfig"]["NetworkMode"] == "host"   # moved to the host's network
    fw.driver.killTask(task["task_id"])
    fw.wait_state(tid, "TASK_KILLED", timeout=30)
    shutdown = requests.post(f"http://{mesos.master_address}/api/v1/scheduler", timeout=10, auth=mesos.http_auth,
                             headers={"Mesos-Stream-Id": fw.driver.stream_id},
                             json={"type": "SHUTDOWN", "framework_id": {"value": fw.id}, "shutdown": {
                                 "executor_id": {"value": executor_id}, "agent_id": offer["agent_id"]}})
    assert shutdown.status_code == 202, shutdown.text
    fw.sched.wait(lambda: not _containers(docker_client, f"executor:{executor_id}"), timeout=30,
                  what="the executor's container to end and be removed")
    shutil.rmtree(script.parent)


def test_nonzero_exit_fails_the_task(fw) -> None:
    _, status = _run(fw, ("TASK_FAILED", "TASK_FINISHED"), "exit 1")
    assert status["state"] == "TASK_FAILED" and "status 1" in status["message"]


def test_memory_over_the_limit_fails_with_the_memory_reason(fw) -> None:
    hog = "x=0123456789abcdef0123456789abcdef; while true; do x=$x$x; done"
    _, status = _run(fw, ("TASK_FAILED", "TASK_FINISHED"), hog, mem=40)
    assert status["state"] == "TASK_FAILED"
    assert status["reason"] == "REASON_CONTAINER_LIMITATION_MEMORY" and "Memory limit" in status["message"]


def test_kill_with_grace_sends_sigterm_first_and_ends_killed(mesos, fw, docker_client) -> None:
    cmd = "trap 'echo got-term; exit 0' TERM; echo ready; while true; do sleep 0.1; done"
    offer = fw.take_offer(cpus=1, mem=256)
    task = task_info(offer["agent_id"], command=cmd, image=TINY, grace_s=10)
    fw.launch(offer, [task])
    tid = task["task_id"]["value"]
    running = fw.wait_state(tid, "TASK_RUNNING", timeout=60)
    ip = running["container_status"]["network_infos"][0]["ip_addresses"][0]["ip_address"]
    assert ip.count(".") == 3
    (container,) = _containers(docker_client, tid)
    labels = container.labels
    assert labels["scylla.managed"] == "true" and labels["scylla.framework"] == fw.id
    assert labels["scylla.agent"] == mesos.agents[0].agent_id
    host = container.attrs["HostConfig"]
    assert host["CpuShares"] == 102 and host["Memory"] == 32 * 1024 * 1024 and not host["Privileged"]
    assert not any("docker.sock" in b for b in host.get("Binds") or [])
    sandbox = _sandbox(mesos, tid)
    fw.sched.wait(lambda: (sandbox / "stdout").read_text() == "ready\n", what="the trap")
    fw.driver.killTask(task["task_id"])
    fw.wait_state(tid, "TASK_KILLED", timeout=30)
    assert (sandbox / "stdout").read_text() == "ready\ngot-term\n"


def test_user_network_alias_and_labels_on_a_job_overlay(mesos, fw, docker_client, swarm_manager) -> None:
    job = f"mt-{uuid.uuid4().hex[:8]}"
    net = create_job_network(docker_client, job)
    try:
        offer = fw.take_offer(cpus=1, mem=256)
        task = task_info(offer["agent_id"], image=TINY, command="sleep 300", network="USER")
        task["container"]["network_infos"] = [{"name": net.name}]
        task["container"]["docker"]["parameters"] = [{"key": "network-alias", "value": f"{job}-proc-0"},
                                                     {"key": "label", "value": f"scylla.job={job}"}]
        task["container"]["hostname"] = "proc0"
        fw.launch(offer, [task])
        tid = task["task_id"]["value"]
        running = fw.wait_state(tid, "TASK_RUNNING", timeout=60)
        info = running["container_status"]["network_infos"][0]
        assert info["name"] == net.name and info["ip_addresses"][0]["ip_address"].startswith("10.")
        (c,) = _containers(docker_client, tid)
        assert c.labels["scylla.job"] == job and c.attrs["Config"]["Hostname"] == "proc0"
        assert f"{job}-proc-0" in c.attrs["NetworkSettings"]["Networks"][net.name]["Aliases"]
        fw.driver.killTask(task["task_id"])
        fw.wait_state(tid, "TASK_KILLED", timeout=30)
        fw.sched.wait(lambda: not _containers(docker_client, tid), what="container removal")
    finally:
        remove_job_network(docker_client, job)


@pytest.mark.parametrize("mutate,state,text", [
    (lambda t, root: t["container"]["docker"].update(image="no-such-image:never"), "TASK_FAILED",
     "no-such-image"),
    (lambda t, root: t["container"].update(network_infos=[{"name": "scylla-does-not-exist"}],
                                           docker={**t["container"]["docker"], "network": "USER"}),
     "TASK_FAILED", "does not exist"),
    (lambda t, root: t["container"].update(volumes=[{"container_path": "/data", "host_path": "/etc",
                                                     "mode": "RO"}]), "TASK_ERROR", "allowed host paths"),
    (lambda t, root: t["container"].update(volumes=[{"container_path": "/s", "host_path": "/var/run/docker.sock",
                                                     "mode": "RW"}]), "TASK_ERROR", "Docker socket"),
], ids=["unknown-image", "missing-network", "volume-outside-allowed-roots", "docker-socket"])
def test_tasks_the_agent_cannot_run(fw, jobs_root, mutate, state, text) -> None:
    offer = fw.take_offer(cpus=1, mem=256)
    task = task_info(offer["agent_id"], image=TINY, command="true")
    mutate(task, jobs_root)
    fw.launch(offer, [task])
    status = fw.wait_state(task["task_id"]["value"], ("TASK_FAILED", "TASK_ERROR", "TASK_FINISHED"), timeout=60)
    assert status["state"] == state and text in status["message"], status


def test_allowed_volume_is_mounted_read_only(fw, jobs_root) -> None:
    offer = fw.take_offer(cpus=1, mem=256)
    task = task_info(offer["agent_id"], image=TINY,
                     command="cat /data/input.txt && ! touch /data/new 2>/dev/null")
    task["container"]["volumes"] = [{"container_path": "/data", "host_path": str(jobs_root / "j1"), "mode": "RO"}]
    fw.launch(offer, [task])
    assert fw.wait_state(task["task_id"]["value"], ("TASK_FINISHED", "TASK_FAILED"), 60)["state"] == "TASK_FINISHED"


def test_agent_restart_recovers_a_running_container(mesos, fw, docker_client) -> None:
    offer = fw.take_offer(cpus=1, mem=256)
    task = task_info(offer["agent_id"], image=TINY, command="sleep 300", grace_s=0)
    fw.launch(offer, [task])
    tid = task["task_id"]["value"]
    fw.wait_state(tid, "TASK_RUNNING", timeout=60)
    (container,) = _containers(docker_client, tid)
    mesos.stop_agent(0, kill=False)
    assert [c.status for c in _containers(docker_client, tid)] == ["running"]
    mesos.start_agent(0)

    def recovered() -> bool:
        state = requests.get(f"http://{mesos.master_address}/master/state", timeout=10, auth=mesos.http_auth).json()
        tasks = [t for f in state["frameworks"] for t in f["tasks"] if t["id"] == tid]
        return [t["state"] for t in tasks] == ["TASK_RUNNING"] and all(a["active"] for a in state["slaves"])
    wait_until(recovered, 30, "the restarted agent to re-register with its task running")
    assert [c.id for c in _containers(docker_client, tid)] == [container.id]  # adopted, not launched again
    fw.driver.killTask(task["task_id"])
    fw.wait_state(tid, "TASK_KILLED", timeout=30)
    fw.sched.wait(lambda: not _containers(docker_client, tid), timeout=30, what="the container to be removed")


def test_stopping_embedded_mesos_removes_its_containers(docker_client) -> None:
    m = EmbeddedMesos(1, docker_client=docker_client, allocation_interval=0.2).start()
    try:
        f = TestFramework(m.master_address, credential=m.framework_credential).start()
        try:
            offer = f.take_offer()
            task = task_info(offer["agent_id"], image=TINY, command="sleep 300")
            f.launch(offer, [task])
            f.wait_state(task["task_id"]["value"], "TASK_RUNNING", timeout=60)
        finally:
            f.stop(teardown=False)
        agent_id = m.agents[0].agent_id
    finally:
        m.stop()
    m.stop()  # idempotent
    assert not docker_client.containers.list(ignore_removed=True, all=True,
                                                 filters={"label": f"scylla.agent={agent_id}"})
