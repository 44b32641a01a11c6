"""pin_host_volume: a job directory is its first framework's, the root is never mounted, nothing swappable."""

from __future__ import annotations

import os

import pytest

from scylla_singa.contracts import VOLUME_OWNER_FILE
from scylla_singa.mesos.agent.job_volumes import VolumeRefused, pin_host_volume


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "jobs"
    (r / "job-a" / "workspace").mkdir(parents=True)
    os.chmod(r / "job-a" / "workspace", 0o1777)
    return r


def test_the_first_framework_claims_a_job_directory_and_only_it_mounts_it_again(root) -> None:
    ws = str(root / "job-a" / "workspace")
    assert pin_host_volume(ws, [root], "fw-1") == ws
    assert (root / "job-a" / VOLUME_OWNER_FILE).read_text() == "fw-1"
    assert pin_host_volume(str(root / "job-a"), [root], "fw-1") == str(root / "job-a")
    with pytest.raises(VolumeRefused, match=r"the job directory of another framework \(fw-1\)"):
        pin_host_volume(ws, [root], "fw-2")


def test_the_root_outside_paths_and_symlinks_are_refused(root, tmp_path) -> None:
    with pytest.raises(VolumeRefused, match="is the allowed root"):
        pin_host_volume(str(root), [root], "fw-1")
    with pytest.raises(VolumeRefused, match="outside the agent's allowed host paths"):
        pin_host_volume(str(tmp_path), [root], "fw-1")
    (root / "link").symlink_to(root / "job-a")
    with pytest.raises(VolumeRefused, match="goes through a symlink"):
        pin_host_volume(str(root / "link"), [root], "fw-1")


def test_a_directory_others_may_write_on_the_way_is_refused(root) -> None:
    (root / "job-b" / "sub").mkdir(parents=True)
    os.chmod(root / "job-b", 0o775)
    with pytest.raises(VolumeRefused, match="can be changed by users other than root"):
        pin_host_volume(str(root / "job-b" / "sub"), [root], "fw-1")


def test_an_owner_file_not_written_by_the_agent_is_not_trusted(root) -> None:
    (root / "job-a" / VOLUME_OWNER_FILE).write_text("fw-evil")
    os.chown(root / "job-a" / VOLUME_OWNER_FILE, 65534, 65534)
    with pytest.raises(VolumeRefused, match="was not written by the agent"):
        pin_host_volume(str(root / "job-a" / "workspace"), [root], "fw-1")


def test_run_workspace_hands_a_shared_directory_to_the_new_framework(root) -> None:
    """`run --workspace DIR` (a later run, a new FrameworkID) must still mount DIR: the user who gives it
    releases the earlier framework's claim, and the new framework's first task claims it."""
    from scylla_singa.delivery.volume import ensure_shared_workspace

    shared = root / "shared-ws" / "deeper"
    ensure_shared_workspace(shared, (root,))
    pin_host_volume(str(shared), [root], "fw-first-run")
    assert (root / "shared-ws" / VOLUME_OWNER_FILE).read_text() == "fw-first-run"
    ensure_shared_workspace(shared, (root,))
    assert pin_host_volume(str(shared), [root], "fw-second-run") == str(shared)


def test_claims_at_the_same_moment_never_see_a_half_written_owner(root) -> None:
    """Agents sharing a filesystem launch a job's tasks at once: every task of the owning framework mounts,
    every other framework is refused naming that owner (never an empty one), and no draft file is left."""
    from concurrent.futures import ThreadPoolExecutor
    for attempt in range(20):
        job = root / f"job-{attempt}"
        (job / "workspace").mkdir(parents=True)

        def claim(i: int, job=job) -> str:
            try:
                pin_host_volume(str(job / "workspace"), [root], "fw-a" if i % 2 == 0 else "fw-b")
                return "fw-a" if i % 2 == 0 else "fw-b"
            except VolumeRefused as refused:
                return str(refused)
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(claim, range(16)))
        owner = (job / VOLUME_OWNER_FILE).read_text()
        assert owner in ("fw-a", "fw-b")
        assert all(a == owner or f"another framework ({owner})" in a for a in answers), answers
        assert sorted(os.listdir(job)) == sorted([VOLUME_OWNER_FILE, "workspace"])
