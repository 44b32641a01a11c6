"""Bad input to `run`: clear errors, exit codes, and nothing left behind."""

from __future__ import annotations

import time

import pytest

from tests.support.scylla_cli import REPO, last_json


def _no_jobs_left(scylla) -> None:
    jobs_dir = scylla.home / "jobs"
    assert not jobs_dir.exists() or not any(jobs_dir.iterdir())
    assert not scylla.containers()


@pytest.mark.parametrize("args, fragment", [
    pytest.param(["examples/invalid/job.conf"], "examples/invalid/job.conf:120:3: nworkers_per_procs", id="invalid-conf"),
    pytest.param(["examples/missing.conf"], "examples/missing.conf: no such file", id="missing-conf"),
    pytest.param(["--policy", "tests/unit/placement/no-such.yaml", "examples/digits-mlp/job.conf"],
                 "cannot read policy file", id="missing-policy"),
    pytest.param(["--volume-root", "/etc/scylla-test", "examples/digits-mlp/job.conf"],
                 "outside the allowed roots", id="volume-root"),
])
def test_refused_before_anything_starts(scylla, args, fragment) -> None:
    r = scylla.run("run", *args, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert fragment in r.stderr and "Traceback" not in r.stderr
    _no_jobs_left(scylla)


def test_policy_file_errors_point_at_the_line(scylla, tmp_path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("name: mine\nfilters: [resources-fit]\nscores:\n  - {name: spred}\n")
    r = scylla.run("run", "--policy", str(bad), "examples/digits-mlp/job.conf", timeout=60)
    assert r.returncode == 2 and f"{bad}:4:12: 'spred' is unknown" in r.stderr


def test_unreachable_master_gives_up_within_the_timeout(scylla) -> None:
    started = time.monotonic()
    r = scylla.run("run", "--master", "127.0.0.1:9", "--connect-timeout", "3s", "examples/digits-mlp/job.conf",
                   timeout=120)
    assert r.returncode == 2 and "could not subscribe to the Mesos master at 127.0.0.1:9 within 3s" in r.stderr
    assert time.monotonic() - started < 60
    _no_jobs_left(scylla)


def test_missing_image_fails_once_with_the_reason_and_no_retry_storm(scylla) -> None:
    r = scylla.run("run", "--json", "--image", "scylla-no-such-image:1", "--max-restarts", "5",
                   "examples/digits-mlp/job.conf", timeout=300)
    assert r.returncode == 1
    out = last_json(r.stdout)
    assert out["state"] == "FAILED" and out["restarts"] == 0
    assert "scylla-no-such-image" in r.stderr
    scylla.assert_nothing_left(out["job"])


def test_a_process_that_exits_on_bad_configuration_fails_the_job_with_its_last_log_lines(scylla, tmp_path) -> None:
    """The runtime's exit 2 (the job cannot run as configured) is not retried, and the user sees why."""
    conf = tmp_path / "missing-data.conf"
    conf.write_text((REPO / "examples/digits-mlp/job.conf").read_text()
                    .replace("/data/digits/train.csv", "/data/digits/missing-train.csv"))
    r = scylla.run("run", "--json", "--max-restarts", "3", str(conf), timeout=300)
    assert r.returncode == 1, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FAILED" and out["restarts"] == 0, out
    # The process's own last stderr line, read from its sandbox, is shown under the failure.
    assert 'layer "data": store_conf.path /data/digits/missing-train.csv does not exist' in r.stderr, r.stderr
    scylla.assert_nothing_left(out["job"])


def test_a_job_too_big_for_the_embedded_agent_says_how_to_run_it_here_anyway(scylla) -> None:
    """Downpour's 6 processes of 1 cpu on an embedded agent of 2 cpus: the failure names the flags that fit it."""
    r = scylla.run("run", "--json", "--agent-resources", "cpus:2;mem:8192", "examples/frameworks/downpour.conf",
                   timeout=300)
    assert r.returncode == 1, r.stderr
    out = last_json(r.stdout)
    assert out["state"] == "FAILED", out
    printed = " ".join(r.stderr.split())  # the terminal wraps long lines
    failure = scylla.store().load(out["job"]).failure
    assert "can never fit this cluster" in failure and " ".join(failure.split()) in printed, (failure, r.stderr)
    assert "embedded agent has 2 cpus and the job's 6 processes ask for 6" in failure
    assert "--cpus 0.33" in failure and '--agent-resources "cpus:6"' in failure
    assert "Traceback" not in r.stderr
    scylla.assert_nothing_left(out["job"])
