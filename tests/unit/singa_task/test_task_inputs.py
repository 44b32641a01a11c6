"""The task's flags, variables and cluster file; anything wrong is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scylla_singa.singa_task.task_inputs import BadInput, read_inputs


def cluster(tmp_path: Path, n: int) -> str:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"job": "j", "nprocs": n, "procs": [{"id": k, "host": f"j-proc-{k}", "port": 6723}
                                                                    for k in range(n)]}))
    return str(path)


def test_the_frameworks_command_and_environment(tmp_path: Path) -> None:
    argv = ["-conf", "./job.conf", "-procs_id", "2", "-cluster", cluster(tmp_path, 3), "-workspace", "/workspace",
            "-resume"]
    env = {"SCYLLA_JOB_ID": "j", "SCYLLA_ZK_HOSTS": "zk:2181", "SCYLLA_ATTEMPT": "4", "MESOS_TASK_ID": "j.proc-2.a4",
           "SCYLLA_PROGRESS_URL": "http://f:1/progress"}
    got = read_inputs(argv, env)
    assert (got.proc, got.cluster_nprocs, got.cluster[2].host, got.workspace, got.resume) == \
        (2, 3, "j-proc-2", "/workspace", True)
    assert (got.job, got.zk_hosts, got.attempt, got.task, got.startup_timeout_s) == \
        ("j", "zk:2181", 4, "j.proc-2.a4", 120.0)


def test_the_proc_id_may_come_from_the_environment() -> None:
    assert read_inputs(["-conf", "j.conf"], {"SCYLLA_PROC_ID": "1"}).proc == 1
    assert read_inputs(["-conf", "j.conf"], {}).attempt == 1
    assert read_inputs(["-help"], {}) is None


@pytest.mark.parametrize("argv, env, says", [
    ([], {}, "-conf JOB.conf is required"),
    (["-conf", "j", "-procs_id", "x"], {}, "argument -procs_id: invalid int value"),
    (["-conf", "j", "-bogus"], {}, "unknown argument(s) -bogus"),
    (["-conf", "j"], {"SCYLLA_PROC_ID": "x"}, "SCYLLA_PROC_ID='x' is not a process id"),
    (["-conf", "j"], {"SCYLLA_ATTEMPT": "0"}, "SCYLLA_ATTEMPT='0' must be positive"),
    (["-conf", "j", "-procs_id", "5", "-cluster", "CLUSTER"], {}, "-procs_id 5 but"),
    (["-conf", "j", "-cluster", "/nonexistent.json"], {}, "cannot read cluster file /nonexistent.json"),
])
def test_bad_input_is_one_clear_line(tmp_path: Path, argv: list, env: dict, says: str) -> None:
    argv = [cluster(tmp_path, 2) if a == "CLUSTER" else a for a in argv]
    with pytest.raises(BadInput) as info:
        read_inputs(argv, env)
    assert says in str(info.value) and "\n" not in str(info.value)
