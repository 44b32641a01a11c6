"""`scylla-singa run` end to end on the embedded master with real containers."""

from __future__ import annotations

import json
import signal

from scylla_singa.common.waiting import wait_until
from tests.support.scylla_cli import REPO, last_json


def test_the_example_trains_above_90_percent_and_leaves_nothing(scylla) -> None:
    r = scylla.run("run", "--json", "examples/digits-mlp/job.conf")
    assert r.returncode == 0, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90, out
    assert out["steps"] == 600 and out["restarts"] == 0
    assert [p["id"] for p in out["procs"]] == [0] and out["procs"][0]["state"] == "TASK_FINISHED"
    scylla.assert_nothing_left(out["job"])
    assert (scylla.home / "jobs" / out["job"] / "workspace").is_dir()  # checkpoints are kept


def test_downpour_trains_across_six_containers_on_its_overlay(scylla) -> None:
    r = scylla.run("run", "--json", "--agent-resources", "cpus:8;mem:8192", "examples/frameworks/downpour.conf")
    assert r.returncode == 0, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["test_accuracy"] >= 0.90, out
    assert sorted(p["id"] for p in out["procs"]) == list(range(6))
    scylla.assert_nothing_left(out["job"])


def test_a_killed_container_restarts_the_gang_which_still_finishes(scylla, tmp_path) -> None:
    conf = tmp_path / "long.conf"
    conf.write_text((REPO / "examples/frameworks/hogwild.conf").read_text()
                    .replace("train_steps: 600", "train_steps: 3000"))
    p = scylla.start("run", "--json", "--agent-resources", "cpus:8;mem:8192", str(conf))
    job = wait_until(lambda: scylla.job_ids(), 60, "the job to be submitted")[0]
    checkpoints = scylla.home / "jobs" / job / "workspace" / "checkpoint"
    # Two complete checkpoints: worker groups are asynchronous, and when the second is marked none
    # of the old gang can still be reporting steps before the first.
    marked = wait_until(lambda: (m := sorted(int(f.name[4:-5]) for f in checkpoints.glob("step*.done")))[1:] and m,
                        180, "two complete checkpoints")
    victim = wait_until(lambda: [c for c in scylla.containers(job) if c.status == "running"], 60, "a container")[0]
    victim.kill()
    p.wait(600)
    out, err = scylla.output(p)
    assert p.returncode == 0, err[-3000:]
    result = last_json(out)
    assert result["state"] == "FINISHED" and result["restarts"] >= 1 and result["test_accuracy"] >= 0.90, result
    # The new gang went on from a checkpoint: none of its processes reported a step before the first
    # one (worker groups are asynchronous, so the old gang's own reports say nothing here).
    new_gang = [s["step"] for s in scylla.store().progress(job, limit=100000)
                if (s["task"] or "").endswith(".a2") and s["phase"] == "train"]
    assert new_gang and min(new_gang) > marked[0], (marked, sorted(new_gang)[:5])
    scylla.assert_nothing_left(job)


def test_killing_the_framework_and_resuming_reconciles_without_duplicates(scylla, tmp_path, docker_client) -> None:
    from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos

    conf = tmp_path / "long.conf"
    conf.write_text((REPO / "examples/frameworks/allreduce.conf").read_text()
                    .replace("train_steps: 600", "train_steps: 2500"))
    with EmbeddedMesos([AgentSpec(resources="cpus:8;mem:8192")], docker_client=docker_client,
                       allowed_host_paths=[scylla.home / "jobs"]) as mesos:
        scylla.authenticate_with(mesos.framework_credential)   # a secure master, as every one is by default
        p = scylla.start("run", "--json", "--master", mesos.master_address, str(conf))
        job = wait_until(lambda: scylla.job_ids(), 60, "the job to be submitted")[0]
        wait_until(lambda: scylla.store().progress(job), 180, "training progress")
        before = {c.id for c in scylla.containers(job)}
        p.send_signal(signal.SIGKILL)
        p.wait(30)
        assert {c.id for c in scylla.containers(job) if c.status == "running"} == before  # tasks go on
        step_at_kill = max(int(s["step"]) for s in scylla.store().progress(job))
        r = scylla.run("resume", "--json", "--master", mesos.master_address, job, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        out = last_json(r.stdout)
        assert out["state"] == "FINISHED" and out["restarts"] == 0 and out["test_accuracy"] >= 0.90, out
        # The running containers' progress POSTs reach the resumed framework (same port as before).
        assert max(int(s["step"]) for s in scylla.store().progress(job)) > step_at_kill, r.stderr[-3000:]
        # The other commands, while the master that ran the job is still up.
        listed = json.loads(scylla.run("jobs", "--json").stdout)
        assert [(j["state"], j["procs"]) for j in listed if j["job"] == job] == [("FINISHED", 3)], listed
        status = json.loads(scylla.run("status", "--json", job[:12]).stdout)  # a unique prefix is enough
        assert status["state"] == "FINISHED" and status["last_progress"]["step"] > step_at_kill, status
        assert sorted(p["id"] for p in status["procs"]) == [0, 1, 2] and status["test_accuracy"] >= 0.90
        out = scylla.run("logs", job)  # process 0's stdout, read through its agent's sandbox files
        assert out.returncode == 0 and "PROGRESS {" in out.stdout and "FINAL {" in out.stdout, out.stderr
        err = scylla.run("logs", "--proc", "2", "--stderr", job)
        assert err.returncode == 0 and "process 2 of 3" in err.stdout, err.stdout[-2000:] + err.stderr
        missing = scylla.run("logs", "--proc", "7", job)
        assert missing.returncode != 0 and "has no task for process 7" in missing.stderr
        record = scylla.store().load(job)
        assert record.attempt == 1  # nothing was launched twice
        scylla.assert_nothing_left(job)


def test_sigterm_to_run_on_the_embedded_default_kills_its_jobs_and_leaves_nothing(scylla, tmp_path) -> None:
    """`kill PID` (or systemd stopping it) ends the jobs as Ctrl-C does: the embedded master and agent go with
    the process, so containers left running would belong to no one."""
    conf = tmp_path / "long.conf"
    conf.write_text((REPO / "examples/digits-mlp/job.conf").read_text().replace("train_steps: 600",
                                                                                  "train_steps: 5000000"))
    p = scylla.start("run", "--json", str(conf))
    job = wait_until(lambda: scylla.job_ids(), 60, "the job to be submitted")[0]
    wait_until(lambda: scylla.containers(job, running=True), 120, "the job's container to run")
    p.send_signal(signal.SIGTERM)
    p.wait(120)
    out, err = scylla.output(p)
    assert p.returncode == 1 and last_json(out)["state"] == "KILLED", err[-3000:]
    assert "stopping: killing the jobs" in err
    scylla.assert_nothing_left(job)
