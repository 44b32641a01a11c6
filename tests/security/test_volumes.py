"""Volume delivery mounts only the job's own directory, checked when it is mounted, never a swapped-in symlink."""

from __future__ import annotations

import os
from pathlib import Path

from scylla_singa.contracts import VOLUME_OWNER_FILE
from scylla_singa.mesos.agent.docker_runner import DockerRunner
from tests.security.agent_fixtures import docker_cluster, frameworks, run_container_task, task_stdout

__all__ = ["docker_cluster", "frameworks"]   # fixtures used by the tests below
TINY = "scylla-tiny:latest"


def _jobs_root() -> Path:
    return Path(os.environ["SCYLLA_HOME"]) / "jobs"


def _job_dir(name: str) -> Path:
    """A job directory as volume delivery makes one: root's 0755, a 1777 workspace, a 0644 file."""
    d = _jobs_root() / name
    (d / "workspace").mkdir(parents=True)
    os.chmod(d / "workspace", 0o1777)
    (d / "job.conf").write_text(f"{name}'s conf\n")
    return d


def _mount(path: Path, mode: str = "RW", at: str = "/data") -> list[dict]:
    return [{"container_path": at, "host_path": str(path), "mode": mode}]


def _yield_offers(fw) -> None:
    """Give the agent's resources back and ask for none (the other framework gets the offers)."""
    fw.driver.suppressOffers()
    with fw.sched.cond:
        held, fw.sched.offers = list(fw.sched.offers), []
    for offer in held:
        fw.driver.declineOffer(offer["id"], {"refuse_seconds": 0})


def test_a_task_of_another_framework_cannot_mount_a_jobs_directory(docker_cluster, frameworks) -> None:
    """Attack: a second framework's task bind-mounts the first job's workspace read-write (and its conf)."""
    victim_dir = _job_dir("victim-job")
    victim = frameworks(docker_cluster.master_address, name="victim")
    status = run_container_task(victim, TINY, "echo secret > /data/ckpt", volumes=_mount(victim_dir / "workspace"))
    assert status["state"] == "TASK_FINISHED", status.get("message")
    assert (victim_dir / VOLUME_OWNER_FILE).read_text() == victim.id   # claimed by its framework at the mount
    _yield_offers(victim)
    attacker = frameworks(docker_cluster.master_address, name="attacker")
    for path in (victim_dir / "workspace", victim_dir / "job.conf", victim_dir):
        status = run_container_task(attacker, TINY, "cat /data/ckpt /data; echo pwned > /data/ckpt",
                                    volumes=_mount(path))
        assert status["state"] == "TASK_FAILED", path
        assert (f"volume host_path {path} is inside {victim_dir}, the job directory of another framework "
                f"({victim.id})") in status["message"]
    assert (victim_dir / "workspace" / "ckpt").read_text() == "secret\n"
    _yield_offers(attacker)
    victim.driver.reviveOffers()
    status = run_container_task(victim, TINY, "cat /data/ckpt", volumes=_mount(victim_dir / "workspace"))
    assert status["state"] == "TASK_FINISHED" and task_stdout(docker_cluster, status) == "secret\n"


def test_the_allowed_root_itself_is_never_mounted(docker_cluster, frameworks) -> None:
    """Attack: a task mounts the whole jobs root to reach every job's files."""
    _job_dir("some-job")
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, TINY, "ls /data", volumes=_mount(_jobs_root(), "RO"))
    assert status["state"] == "TASK_FAILED"
    assert "is the allowed root" in status["message"] and "its own job's directory" in status["message"]


def test_a_directory_swapped_for_a_symlink_between_check_and_mount_does_not_escape(docker_cluster, frameworks,
                                                                                    monkeypatch) -> None:
    """Attack: the job directory passes the agent's check, then is replaced by a symlink to /etc before the
    container is created (the hook below runs between the two): the launch fails, /etc is never mounted."""
    job = _job_dir("swapped-job")
    (job / "workspace" / "marker").write_text("the original directory\n")
    checked = DockerRunner._check_engine

    def check_then_swap(self, spec):
        answer = checked(self, spec)
        os.rename(job / "workspace", job / "workspace.orig")
        (job / "workspace").symlink_to("/etc")
        return answer
    monkeypatch.setattr(DockerRunner, "_check_engine", check_then_swap)
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, TINY, "cat /data/marker /data/hostname", volumes=_mount(job / "workspace", "RO"))
    assert status["state"] == "TASK_FAILED"
    assert f"volume host_path {job / 'workspace'} refused at mount time" in status["message"]
    assert f"goes through a symlink (it resolves to {os.path.realpath('/etc')} now)" in status["message"]
    assert task_stdout(docker_cluster, status) == ""


def test_a_job_directory_others_can_write_is_refused(docker_cluster, frameworks) -> None:
    """Attack set-up: a directory on the way that non-root users can write lets them swap a component for a
    symlink after any check; the agent refuses to mount through one."""
    job = _job_dir("open-job")
    os.chmod(job, 0o777)
    fw = frameworks(docker_cluster.master_address)
    status = run_container_task(fw, TINY, "ls /data", volumes=_mount(job / "workspace"))
    assert status["state"] == "TASK_FAILED"
    assert "can be changed by users other than root" in status["message"]
