"""The identifiers both ends of a contract use: task ids, names on the overlay, the default command."""

from __future__ import annotations

import pytest

from scylla_singa import contracts


@pytest.mark.parametrize("job, proc, attempt", [("digits-mlp-3f9a1c", 0, 1), ("a.b.c", 12, 7)])
def test_task_ids_parse_back_into_their_parts(job, proc, attempt) -> None:
    tid = contracts.task_id(job, proc, attempt)
    assert contracts.parse_task_id(tid) == (job, proc, attempt)


def test_a_foreign_task_id_is_not_ours() -> None:
    assert contracts.parse_task_id("some-other-framework-task") is None


def test_job_network_names_are_safe_and_short() -> None:
    name = contracts.job_network_name("we:ird job/" + "x" * 80)
    assert name.startswith(contracts.NETWORK_PREFIX) and len(name) <= 57
    assert set(name) <= set("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def test_the_default_command_names_the_files_the_framework_delivers() -> None:
    cmd = contracts.DEFAULT_COMMAND.format(proc=3, workspace="/workspace")
    assert cmd == ("exec singa -conf /mnt/scylla/job.conf -procs_id 3 -cluster /mnt/scylla/cluster.json "
                   "-workspace /workspace")
