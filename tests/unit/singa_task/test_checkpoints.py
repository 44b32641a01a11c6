"""Choosing the newest complete checkpoint step among real SINGA checkpoint files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scylla_singa.singa_task.checkpoints import blobprotos_complete, newest_complete, snapshot, steps_on_disk

REAL = Path(__file__).parent / "checkpoints" / "step200-worker0"   # written by SINGA 0.3.0 (digits MLP)


def test_a_real_checkpoint_is_complete_and_every_truncation_is_not() -> None:
    data = REAL.read_bytes()
    assert blobprotos_complete(data)
    cuts = [n for n in range(1, len(data)) if blobprotos_complete(data[:n])]
    assert cuts == []


def put(folder: Path, name: str, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def test_newest_complete_skips_a_torn_newest_step(tmp_path: Path) -> None:
    data = REAL.read_bytes()
    for step in (0, 200, 400):
        put(tmp_path, f"step{step}-worker0", data)
    put(tmp_path, "step600-worker0", data[: len(data) // 2])   # killed while writing
    put(tmp_path, "notes.txt", b"x")
    point = newest_complete(tmp_path, writers=1)
    assert point is not None and point.step == 400 and point.files == (tmp_path / "step400-worker0",)


def test_every_writer_of_group_zero_must_have_written(tmp_path: Path) -> None:
    data = REAL.read_bytes()
    put(tmp_path, "step200-worker0", data)
    put(tmp_path, "step200-worker1", data)
    put(tmp_path, "step400-worker0", data)
    assert newest_complete(tmp_path, writers=2).step == 200
    assert sorted(steps_on_disk(tmp_path)) == [200, 400]


def test_step_zero_alone_is_no_resume_point(tmp_path: Path) -> None:
    put(tmp_path, "step0-worker0", REAL.read_bytes())
    assert newest_complete(tmp_path, writers=1) is None
    assert newest_complete(tmp_path / "absent", writers=1) is None


@pytest.mark.parametrize("worker1_files, expected", [
    ({0: b"", 200: b"", 400: b""}, 400),      # a worker that owns no parameters always writes empty files
    ({0: "real", 200: "real", 400: b""}, 200),  # an empty file where there used to be data: a torn write
])
def test_empty_files(tmp_path: Path, worker1_files: dict, expected: int) -> None:
    data = REAL.read_bytes()
    for step, content in worker1_files.items():
        put(tmp_path, f"step{step}-worker0", data)
        put(tmp_path, f"step{step}-worker1", data if content == "real" else content)
    assert newest_complete(tmp_path, writers=2).step == expected


def test_snapshot_copies_the_files(tmp_path: Path) -> None:
    put(tmp_path / "checkpoint", "step200-worker0", REAL.read_bytes())
    point = newest_complete(tmp_path / "checkpoint", 1)
    copy = snapshot(point, tmp_path / "resume" / "attempt-2")
    assert copy.step == 200 and copy.files[0].read_bytes() == REAL.read_bytes()
    shutil.rmtree(tmp_path / "checkpoint")
    assert copy.files[0].exists()
