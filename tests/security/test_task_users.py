"""Process tasks run as their framework's user, never as the agent's root, with none of the agent's environment."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import pytest

from tests.security.agent_fixtures import (NOBODY_UID, docker_cluster, frameworks, process_cluster,
                                           run_container_task, run_task, sandbox_of, task_stdout)

__all__ = ["docker_cluster", "frameworks", "process_cluster"]   # fixtures used by the tests below


def test_framework_user_nobody_runs_as_nobody_with_no_supplementary_groups(process_cluster, frameworks) -> None:
    """Attack (the audit's): an anonymous framework declaring user "nobody" ran `id` and got uid=0(root).
    Now the task is switched to nobody: uid, gid and groups are nobody's, and it owns its 0750 sandbox."""
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, 'id -u; id -g; id -G; stat -c "%u %a" "$MESOS_SANDBOX"; touch "$MESOS_SANDBOX/mine"')
    assert status["state"] == "TASK_FINISHED", status.get("message")
    assert task_stdout(process_cluster, status).split("\n")[:4] == [
        str(NOBODY_UID), str(NOBODY_UID), str(NOBODY_UID), f"{NOBODY_UID} 750"]


@pytest.mark.parametrize("user", ["root", "0", "00", "+0", "0000:0"])
def test_root_in_any_spelling_is_refused_naming_the_user_and_the_flag(process_cluster, frameworks, user) -> None:
    """Attack: a task asks to run as root (CommandInfo.user) spelled so a text check would miss it."""
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, "id -u > ran")
    assert status["state"] == "TASK_FINISHED"   # the framework's own user works on this agent
    status = run_task(fw, "id -u", user=user)
    assert status["state"] == "TASK_FAILED"
    assert f"user {user!r} (CommandInfo.user) is uid 0 (root)" in status["message"]
    assert "--allow-root-tasks" in status["message"]
    assert task_stdout(process_cluster, status) == ""


def test_framework_user_root_is_refused(process_cluster, frameworks) -> None:
    """Attack: a framework declares FrameworkInfo.user "root" to get root on every agent."""
    fw = frameworks(process_cluster.master_address, user="root")
    status = run_task(fw, "id -u")
    assert status["state"] == "TASK_FAILED"
    assert "user 'root' (FrameworkInfo.user) is uid 0 (root)" in status["message"]
    assert "--allow-root-tasks" in status["message"]


def test_empty_framework_user_means_the_agents_own_user_and_root_is_refused(process_cluster, frameworks) -> None:
    """Attack: a framework leaves FrameworkInfo.user empty; Mesos then uses the agent's user (root here)."""
    fw = frameworks(process_cluster.master_address, user="")
    status = run_task(fw, "id -u")
    assert status["state"] == "TASK_FAILED"
    assert "the agent's own user (FrameworkInfo.user is empty)" in status["message"]
    assert "uid 0 (root)" in status["message"]


def test_an_unknown_user_fails_the_task_with_a_clear_message(process_cluster, frameworks) -> None:
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, "id -u", user="no-such-user-on-this-machine")
    assert status["state"] == "TASK_FAILED"
    assert "user 'no-such-user-on-this-machine' (CommandInfo.user) is unknown on this agent's machine" \
        in status["message"]


def test_root_runs_only_on_an_agent_started_with_allow_root_tasks(process_cluster, frameworks) -> None:
    """The flag is the one way to run tasks as root: the same task refused above runs once it is set."""
    process_cluster.stop_agent(0, kill=True)
    process_cluster.agents[0].cfg.allow_root_tasks = True
    process_cluster.start_agent(0)
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, "id -u", user="00")
    assert status["state"] == "TASK_FINISHED", status.get("message")
    assert task_stdout(process_cluster, status) == "0\n"


def test_the_agents_environment_does_not_leak_into_a_task(process_cluster, frameworks, monkeypatch) -> None:
    """Attack: a task prints its environment to read the agent's secrets (tokens, credentials in its env)."""
    monkeypatch.setenv("SCYLLA_AGENT_SECRET_MARKER", "leaked-if-you-see-this")
    assert os.environ["SCYLLA_AGENT_SECRET_MARKER"]   # the agent runs in this process: its environment
    fw = frameworks(process_cluster.master_address, user="nobody")
    status = run_task(fw, "env", env={"GIVEN": "by-the-taskinfo"})
    assert status["state"] == "TASK_FINISHED", status.get("message")
    env = dict(line.split("=", 1) for line in task_stdout(process_cluster, status).splitlines() if "=" in line)
    assert "SCYLLA_AGENT_SECRET_MARKER" not in env and "SCYLLA_HOME" not in env
    assert env["GIVEN"] == "by-the-taskinfo"
    assert env["PATH"] == "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    assert env["MESOS_TASK_ID"] == status["task_id"]["value"] and env["MESOS_SANDBOX"]
    assert set(env) <= {"GIVEN", "PATH", "MESOS_TASK_ID", "MESOS_FRAMEWORK_ID", "MESOS_AGENT_ID", "MESOS_SANDBOX",
                        "MESOS_DIRECTORY", "PWD", "SHLVL", "_"}   # the last three: the shell's own


# ---- Docker tasks -----------------------------------------------------------------------------------
TINY = "scylla-tiny:latest"          # USER 65534:65534, no /etc/passwd
SINGA_PY = "singa-py:latest"         # USER singa:singa (a name: resolved in the image's /etc/passwd)
TOOR = "scylla-dev-sec-agent-toor:latest"


@pytest.fixture(scope="module")
def toor_image() -> Iterator[str]:
    """An image whose USER is a name that its own /etc/passwd maps to uid 0 (built here, removed at the end)."""
    import docker

    client = docker.from_env(timeout=120)
    dockerfile = (f"FROM {TINY}\nUSER 0\nRUN mkdir -p /etc && echo 'toor:x:0:0::/:/bin/sh' > /etc/passwd\n"
                  "USER toor\n")
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=TOOR, rm=True, labels={"scylla.test": "sec"})
    yield TOOR
    client.images.remove(TOOR, force=True)


@pytest.mark.parametrize("user", ["0", "00", "+0", "-0", "0000:0", "root"])
def test_docker_user_parameter_root_in_any_spelling_is_refused(docker_cluster, frameworks, user) -> None:
    """Attack: docker parameter user "00", "+0", "0000:0" passed the old non-root check but are uid 0."""
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, TINY, "id -u", params=[{"key": "user", "value": user}])
    assert status["state"] == "TASK_ERROR"
    assert f"docker parameter user={user!r} is refused: it is uid 0 (root)" in status["message"]


def test_an_image_whose_user_name_is_uid_0_is_refused(docker_cluster, frameworks, toor_image) -> None:
    """Attack: an image's USER is a harmless-looking name its /etc/passwd maps to uid 0."""
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, toor_image, "id -u")
    assert status["state"] == "TASK_FAILED"
    assert f"user 'toor' (image {toor_image}'s USER) is uid 0 (root)" in status["message"]
    status = run_container_task(fw, toor_image, "id -u", params=[{"key": "user", "value": "toor"}])
    assert status["state"] == "TASK_FAILED"
    assert "user 'toor' (the docker parameter user) is uid 0 (root)" in status["message"]


def test_an_image_without_user_runs_as_root_only_with_the_flag(docker_cluster, frameworks, toor_image) -> None:
    """An image with no USER would run as root: refused, naming the fix; allowed on an agent with the flag."""
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, toor_image, "id -u", params=[{"key": "user", "value": "65534"}])
    assert status["state"] == "TASK_FINISHED", status.get("message")   # the same image as another user runs
    status = run_container_task(fw, "debian:bookworm-slim", "id -u")
    assert status["state"] == "TASK_FAILED"
    assert "image debian:bookworm-slim has no USER, so it runs as root (uid 0)" in status["message"]
    assert "--allow-root-tasks" in status["message"]
    docker_cluster.stop_agent(0, kill=True)
    docker_cluster.agents[0].cfg.allow_root_tasks = True
    docker_cluster.start_agent(0)
    status = run_container_task(fw, "debian:bookworm-slim", "id -u")
    assert status["state"] == "TASK_FINISHED", status.get("message")
    assert task_stdout(docker_cluster, status) == "0\n"


def test_image_user_names_resolve_and_unknown_names_are_refused(docker_cluster, frameworks) -> None:
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, SINGA_PY, "id -u")
    assert status["state"] == "TASK_FINISHED", status.get("message")
    assert task_stdout(docker_cluster, status).strip() not in ("", "0")
    status = run_container_task(fw, SINGA_PY, "id -u", params=[{"key": "user", "value": "ghost"}])
    assert status["state"] == "TASK_FAILED"
    assert f"user 'ghost' (the docker parameter user) is not defined in image {SINGA_PY}'s /etc/passwd" \
        in status["message"]


def test_task_groups_and_custom_executors_run_as_the_framework_user_too(process_cluster, frameworks) -> None:
    """Attack: the other paths that start a host process (LAUNCH_GROUP's default executor, a custom
    executor) must not be a way around the switch: a group's task runs as nobody, a root executor is refused."""
    from tests.support.mesos_framework import task_info

    fw = frameworks(process_cluster.master_address, user="nobody")
    offer = fw.take_offer()
    member = task_info(offer["agent_id"], command='id -u; test -w "$MESOS_SANDBOX" && echo writable')
    fw.driver.acceptOffers([offer["id"]], [{"type": "LAUNCH_GROUP", "launch_group": {
        "executor": {"type": "DEFAULT", "executor_id": {"value": "group-as-nobody"}},
        "task_group": {"tasks": [member]}}}], filters={"refuse_seconds": 0})
    status = fw.wait_state(member["task_id"]["value"], ("TASK_FINISHED", "TASK_FAILED"), timeout=30)
    assert status["state"] == "TASK_FINISHED", status.get("message")
    run = sandbox_of(process_cluster.agent_addresses[0], "group-as-nobody")
    with open(os.path.join(run, "tasks", member["task_id"]["value"], "stdout")) as f:
        assert f.read() == f"{NOBODY_UID}\nwritable\n"
    offer = fw.take_offer()
    task = task_info(offer["agent_id"])
    del task["command"]
    task["executor"] = {"type": "CUSTOM", "executor_id": {"value": "root-executor"},
                        "command": {"value": "id -u", "user": "0000"},
                        "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 0.1}},
                                      {"name": "mem", "type": "SCALAR", "scalar": {"value": 32}}]}
    fw.launch(offer, [task])
    status = fw.wait_state(task["task_id"]["value"], ("TASK_FAILED", "TASK_LOST", "TASK_ERROR"), timeout=30)
    assert "user '0000' (CommandInfo.user) is uid 0 (root)" in status["message"]


def test_what_the_agent_keeps_of_its_tasks_is_not_readable_by_them(process_cluster, frameworks) -> None:
    """Attack: a task (as nobody) reads the agent's checkpointed TaskInfos, other tasks' secrets included."""
    fw = frameworks(process_cluster.master_address, user="nobody")
    meta = process_cluster.agents[0].work_dir / "meta"
    status = run_task(fw, f"ls {meta}/tasks || echo refused", env={"SECRET": "s3cret"})
    assert status["state"] == "TASK_FINISHED"
    assert task_stdout(process_cluster, status) == "refused\n"
    assert oct(meta.stat().st_mode & 0o777) == "0o700"
