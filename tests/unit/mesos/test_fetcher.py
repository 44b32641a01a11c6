"""The fetcher on local files: extraction, executables, output names, refusals."""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import zipfile

import pytest

from scylla_singa.mesos.agent.fetcher import FetchError, fetch_all, webhdfs_open_url


def _fetch(uris, sandbox, hdfs=None, roots=None):
    """Local files from anywhere under the test's tmp dir (the sandbox's parent) unless `roots` says otherwise."""
    return asyncio.run(fetch_all(uris, sandbox, hdfs, (sandbox.parent,) if roots is None else roots))


def test_zip_and_gz_are_extracted_and_executables_are_not(tmp_path) -> None:
    src, sb = tmp_path / "src", tmp_path / "sb"
    src.mkdir()
    sb.mkdir()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("dir/a.txt", "A")
    (src / "bundle.zip").write_bytes(buf.getvalue())
    (src / "data.txt.gz").write_bytes(gzip.compress(b"G"))
    (src / "tool.tar.gz").write_bytes(b"not really an archive")
    _fetch([{"value": str(src / "bundle.zip")}, {"value": f"file://{src / 'data.txt.gz'}"},
            {"value": str(src / "tool.tar.gz"), "executable": True}], sb)
    assert (sb / "dir" / "a.txt").read_text() == "A" and (sb / "data.txt").read_bytes() == b"G"
    assert os.access(sb / "tool.tar.gz", os.X_OK)


def test_extract_false_keeps_the_archive(tmp_path) -> None:
    (tmp_path / "x.zip").write_bytes(b"junk")
    sb = tmp_path / "sb"
    sb.mkdir()
    _fetch([{"value": str(tmp_path / "x.zip"), "extract": False, "output_file": "kept.zip"}], sb)
    assert (sb / "kept.zip").read_bytes() == b"junk"


@pytest.mark.parametrize("uri,hdfs,message", [
    ({"value": "no-such-file"}, None, "no such file"),
    ({"value": "ftp://h/x"}, None, "unsupported URI scheme"),
    ({"value": "hdfs://nn/x"}, None, "--hdfs"),
    ({"value": "/etc/hostname", "output_file": "../escape"}, None, "leaves the sandbox"),
    ({"value": "bad.zip"}, None, "bad.zip"),
], ids=["missing", "scheme", "hdfs-without-endpoint", "output-escape", "corrupt-zip"])
def test_failures_name_the_uri(tmp_path, uri, hdfs, message) -> None:
    sb = tmp_path / "sb"
    sb.mkdir()
    if uri["value"] == "bad.zip":
        (tmp_path / "bad.zip").write_bytes(b"nope")
        uri = {"value": str(tmp_path / "bad.zip")}
    if uri["value"] == "no-such-file":   # under the fetcher's roots, but not there
        uri = {"value": str(tmp_path / "no-such-file")}
    with pytest.raises(FetchError, match=message):
        _fetch([uri], sb, hdfs)


def test_webhdfs_url() -> None:
    assert webhdfs_open_url("http://nn:9870/", "hdfs://nn:8020/jobs/j1/job.conf") == \
        "http://nn:9870/webhdfs/v1/jobs/j1/job.conf?op=OPEN"


@pytest.mark.parametrize("spelling", ["file", "bare"])
def test_a_local_file_outside_the_fetcher_roots_is_refused_naming_it_and_the_flag(tmp_path, spelling) -> None:
    """Attack: a task asks the fetcher for /etc/shadow (file:// or a bare path) to read it from its sandbox."""
    sb = tmp_path / "sb"
    sb.mkdir()
    value = "file:///etc/shadow" if spelling == "file" else "/etc/shadow"
    with pytest.raises(FetchError, match=r"only from under the agent's allowed roots .*--fetcher-allowed-roots"):
        _fetch([{"value": value}], sb, roots=(tmp_path / "jobs",))
    assert not (sb / "shadow").exists()


def test_a_symlink_inside_the_roots_pointing_out_is_refused(tmp_path) -> None:
    """Attack: a file under the allowed root is a symlink to /etc/passwd; the fetcher resolves it and refuses."""
    root, sb = tmp_path / "jobs", tmp_path / "sb"
    root.mkdir()
    sb.mkdir()
    (root / "innocent.txt").symlink_to("/etc/passwd")
    with pytest.raises(FetchError, match=r"resolved: /etc/passwd\) is not there"):
        _fetch([{"value": str(root / "innocent.txt")}], sb, roots=(root,))
    (root / "real.txt").write_text("ok")
    _fetch([{"value": str(root / "real.txt")}], sb, roots=(root,))
    assert (sb / "real.txt").read_text() == "ok"
