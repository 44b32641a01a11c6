"""Atomic writes: the old file or the new one, never half; no temporary left behind on failure."""

from __future__ import annotations

import os
import stat

import pytest

from scylla_singa.common import files
from scylla_singa.common.files import read_json, write_atomic, write_json_atomic, write_text_atomic


def test_writes_replace_the_file_whole_and_create_its_directory(tmp_path) -> None:
    target = tmp_path / "a" / "b" / "state.json"
    write_json_atomic(target, {"n": 1}, indent=1)
    assert target.read_text() == '{\n "n": 1\n}\n' and read_json(target) == {"n": 1}
    write_json_atomic(target, {"n": 2})
    assert read_json(target) == {"n": 2}
    assert os.listdir(target.parent) == ["state.json"]


def test_chunks_are_written_in_order_and_the_mode_is_set_before_the_file_appears(tmp_path) -> None:
    target = tmp_path / "image.tar"
    write_atomic(target, (bytes([i]) * 3 for i in range(3)), mode=0o640)
    assert target.read_bytes() == b"\x00\x00\x00\x01\x01\x01\x02\x02\x02"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch) -> None:
    target = tmp_path / "job.conf"
    write_text_atomic(target, "old")

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(files.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["job.conf"]


def test_temporary_names_are_hidden_and_never_repeat() -> None:
    names = {files.temporary_name("step3.done") for _ in range(100)}
    assert len(names) == 100 and all(n.startswith(".step3.done.tmp-") for n in names)


def test_read_json_answers_the_default_for_a_missing_or_broken_file(tmp_path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    assert read_json(tmp_path / "missing.json", {}) == {} and read_json(tmp_path / "bad.json") is None
