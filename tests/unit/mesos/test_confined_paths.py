"""open_confined: a path inside the roots opened with no symlink followed, even one swapped in after the check."""

from __future__ import annotations

import os

import pytest

from scylla_singa.mesos.agent import confined_paths
from scylla_singa.mesos.agent.confined_paths import PathRefused, open_confined


def test_a_plain_path_inside_the_root_opens(tmp_path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("x")
    fd = open_confined(str(tmp_path / "a" / "f"), [tmp_path], flags=os.O_RDONLY)
    with os.fdopen(fd) as f:
        assert f.read() == "x"


def test_outside_the_root_and_symlinks_out_are_refused(tmp_path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "out").symlink_to("/etc")
    for path in ("/etc/passwd", str(root / "out" / "passwd"), str(root / ".." / "x")):
        with pytest.raises(PathRefused, match="is outside"):
            open_confined(path, [root])


def test_a_directory_swapped_for_a_symlink_after_the_check_is_refused(tmp_path, monkeypatch) -> None:
    """The race the walk closes: the path is checked, then a directory on it becomes a symlink to /etc."""
    root = tmp_path / "root"
    (root / "job").mkdir(parents=True)
    (root / "job" / "passwd").write_text("mine")
    checked = confined_paths.within_roots

    def check_then_swap(path, roots):
        found = checked(path, roots)
        os.rename(root / "job", root / "job.old")
        (root / "job").symlink_to("/etc")
        return found
    monkeypatch.setattr(confined_paths, "within_roots", check_then_swap)
    with pytest.raises(PathRefused, match="job is a symlink"):
        open_confined(str(root / "job" / "passwd"), [root], flags=os.O_RDONLY)


def test_a_last_component_that_is_a_symlink_is_refused_even_as_a_handle(tmp_path, monkeypatch) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "f").write_text("mine")
    checked = confined_paths.within_roots

    def check_then_swap(path, roots):
        found = checked(path, roots)
        (root / "f").unlink()
        (root / "f").symlink_to("/etc/passwd")
        return found
    monkeypatch.setattr(confined_paths, "within_roots", check_then_swap)
    with pytest.raises(PathRefused, match="symlink"):
        open_confined(str(root / "f"), [root])
