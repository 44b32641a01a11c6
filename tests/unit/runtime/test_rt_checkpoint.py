"""Checkpoints (atomic, local and WebHDFS), resume, and progress POSTs, through the real `singa` main."""

from __future__ import annotations

import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from scylla_singa.runtime.checkpoint import (LocalStore, StoreError, WebHdfsStore, complete_steps,
                                             decode_checkpoint, encode_checkpoint, load_slice, open_store,
                                             resumable_steps)
from scylla_singa.runtime.machine_events import SaveSlice
from scylla_singa.runtime.main import main
from scylla_singa.runtime.runtime_errors import SingaConfigError
from .rt_helpers import write_conf


def lines(out: str, kind: str) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith(kind + " ")]


# ---- local store


def test_a_failed_write_leaves_nothing_under_the_final_name(tmp_path: Path, monkeypatch) -> None:
    store = LocalStore(tmp_path / "ckpt")
    store.write_atomic("step1-proc0.npz", b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(StoreError, match="disk full"):
        store.write_atomic("step2-proc0.npz", b"new")
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["step1-proc0.npz"]
    assert store.read("step1-proc0.npz") == b"old"


def test_checkpoint_files_round_trip_and_know_their_model(tmp_path: Path) -> None:
    slices = (SaveSlice(5, "s0.0", 0, 3, np.arange(3, dtype=np.float32), {"history": np.ones(3, np.float32)}),
              SaveSlice(5, "s0.1", 3, 5, np.arange(2, dtype=np.float32), {}))
    signature = [["w", [5]]]
    meta, got = decode_checkpoint(encode_checkpoint(5, 2, slices, signature))
    assert (meta["step"], meta["proc"], meta["signature"]) == (5, 2, signature)
    assert [(s.lo, s.hi) for s in got] == [(0, 3), (3, 5)]
    np.testing.assert_array_equal(got[0].state["history"], np.ones(3))
    store = LocalStore(tmp_path)
    store.write_atomic("step5-proc2.npz", encode_checkpoint(5, 2, slices, signature))
    np.testing.assert_array_equal(load_slice(store, 5, 0, 3, 5, signature).values, [0, 1])
    with pytest.raises(SingaConfigError, match="written for a different model"):
        load_slice(store, 5, 2, 0, 3, [["other", [5]]])
    with pytest.raises(SingaConfigError, match=r"has no slice \[0, 5\)"):
        load_slice(store, 5, 2, 0, 5, signature)


def test_only_marked_steps_are_resumable(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for name in ("step100-proc0.npz", "step100.done", "step200-proc0.npz", "step300-proc1.npz", "step300.done",
                 ".step400-proc0.npz.tmp-1"):
        (tmp_path / name).write_bytes(b"x")
    assert complete_steps(store) == {100, 300}
    assert resumable_steps(store, 0, writes_slices=True) == (100,)
    assert resumable_steps(store, 0, writes_slices=False) == (100, 300)


# ---- a fake WebHDFS namenode + datanode


class FakeWebHdfs:
    """Just enough of WebHDFS: MKDIRS, CREATE (307 to a 'datanode'), RENAME, LISTSTATUS, GETFILESTATUS, OPEN,
    DELETE. A namenode serialises namespace changes; so does this (one lock)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ops: list[tuple[str, str]] = []
        self.namespace = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, code: int, body: bytes = b"", headers: dict | None = None) -> None:
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _parse(self):
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                hdfs_path = urllib.parse.unquote(url.path[len("/webhdfs/v1"):])
                fake.ops.append((q["op"], hdfs_path))
                return q, hdfs_path, fake.root / hdfs_path.lstrip("/")

            def do_PUT(self):
                q, hp, local = self._parse()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if q["op"] == "MKDIRS":
                    local.mkdir(parents=True, exist_ok=True)
                    return self._reply(200, b'{"boolean": true}')
                if q["op"] == "CREATE" and "datanode" not in q:
                    loc = f"http://127.0.0.1:{fake.port}{self.path}&datanode=1"
                    return self._reply(307, headers={"Location": loc})
                if q["op"] == "CREATE":
                    local.parent.mkdir(parents=True, exist_ok=True)
                    local.write_bytes(body)
                    return self._reply(201)
                if q["op"] == "RENAME":
                    dst = fake.root / q["destination"].lstrip("/")
                    with fake.namespace:
                        if dst.exists() or not local.exists():
                            return self._reply(200, b'{"boolean": false}')
                        local.rename(dst)
                    return self._reply(200, b'{"boolean": true}')
                self._reply(400)

            def do_GET(self):
                q, hp, local = self._parse()
                if q["op"] == "LISTSTATUS":
                    if not local.is_dir():
                        return self._reply(404, b'{"RemoteException": {}}')
                    items = [{"pathSuffix": p.name, "type": "FILE"} for p in sorted(local.iterdir())]
                    return self._reply(200, json.dumps({"FileStatuses": {"FileStatus": items}}).encode())
                if q["op"] == "GETFILESTATUS":
                    try:
                        status = {"FileStatus": {"length": local.stat().st_size, "type": "FILE"}}
                    except FileNotFoundError:
                        return self._reply(404, b'{"RemoteException": {}}')
                    return self._reply(200, json.dumps(status).encode())
                if q["op"] == "OPEN" and "datanode" not in q:
                    return self._reply(307, headers={"Location": f"http://127.0.0.1:{fake.port}{self.path}&datanode=1"})
                if q["op"] == "OPEN":
                    return self._reply(200, local.read_bytes()) if local.exists() else self._reply(404)
                self._reply(400)

            def do_DELETE(self):
                q, hp, local = self._parse()
                with fake.namespace:
                    existed = local.exists()
                    if existed:
                        local.unlink()
                self._reply(200, json.dumps({"boolean": existed}).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_webhdfs_store_writes_atomically_lists_reads_and_overwrites(tmp_path: Path) -> None:
    with FakeWebHdfs(tmp_path / "hdfs") as fake:
        store = open_store("hdfs://namenode:8020/user/singa/job", webhdfs_url=fake.url)
        assert isinstance(store, WebHdfsStore) and store.path == "/user/singa/job/checkpoint"
        assert store.names() == []
        store.write_atomic("step10-proc0.npz", b"abc")
        store.write_atomic("step10-proc0.npz", b"abcd")  # onto an existing file: delete, then rename
        assert store.names() == ["step10-proc0.npz"]
        assert store.read("step10-proc0.npz") == b"abcd"
        creates = [p for op, p in fake.ops if op == "CREATE"]
        assert creates and all("/.step10-proc0.npz.tmp-" in p for p in creates)  # never the final name
        assert ("RENAME", creates[0]) in fake.ops


def _write_concurrently(store, name: str, data: bytes, writers: int = 4, times: int = 25) -> list[BaseException]:
    errors: list[BaseException] = []

    def write() -> None:
        for _ in range(times):
            try:
                store.write_atomic(name, data)
            except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                errors.append(exc)
    threads = [threading.Thread(target=write) for _ in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_every_process_may_write_the_same_marker_at_once_locally(tmp_path: Path) -> None:
    """All processes write step N's marker, maybe into one shared workspace, all as pid 1 of their container."""
    store = LocalStore(tmp_path)
    assert _write_concurrently(store, "step100.done", b'{"step": 100}\n') == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step100.done"]
    assert store.read("step100.done") == b'{"step": 100}\n'


def test_every_process_may_write_the_same_marker_at_once_in_hdfs(tmp_path: Path) -> None:
    with FakeWebHdfs(tmp_path / "hdfs") as fake:
        store = WebHdfsStore(fake.url, "/jobs/j/checkpoint")
        assert _write_concurrently(store, "step100.done", b'{"step": 100}\n', times=10) == []
        assert store.names() == ["step100.done"] and store.read("step100.done") == b'{"step": 100}\n'
        assert sorted(p.name for p in (tmp_path / "hdfs/jobs/j/checkpoint").iterdir()) == ["step100.done"]
        fake.ops.clear()
        store.write_atomic("step100.done", b'{"step": 100}\n')  # already there with these bytes: kept as it is
        assert ("DELETE", "/jobs/j/checkpoint/step100.done") not in fake.ops


def test_webhdfs_errors_are_store_errors(tmp_path: Path) -> None:
    store = WebHdfsStore("http://127.0.0.1:9", "/x", timeout_s=2)
    with pytest.raises(StoreError, match="WebHDFS"):
        store.names()


def test_training_checkpoints_to_hdfs_and_resumes_from_it(tmp_path: Path, digits_dir: Path, monkeypatch,
                                                          capsys) -> None:
    with FakeWebHdfs(tmp_path / "hdfs") as fake:
        monkeypatch.setenv("SCYLLA_WEBHDFS_URL", fake.url)
        conf = write_conf(tmp_path, "digits-mlp", digits_dir, train_steps=300, checkpoint_freq=100)
        assert main(["-conf", str(conf), "-workspace", "hdfs://nn:8020/jobs/j1"]) == 0
        ckpt = tmp_path / "hdfs" / "jobs" / "j1" / "checkpoint"
        assert sorted(p.name for p in ckpt.iterdir()) == [
            "step100-proc0.npz", "step100.done", "step200-proc0.npz", "step200.done", "step300-proc0.npz",
            "step300.done"]
        (ckpt / "step300.done").unlink()
        capsys.readouterr()
        assert main(["-conf", str(conf), "-workspace", "hdfs://nn:8020/jobs/j1", "-resume"]) == 0
        captured = capsys.readouterr()
        assert "training from step 200" in captured.err
        assert [p["step"] for p in lines(captured.out, "PROGRESS") if p["phase"] == "train"] == [250, 300]


def test_checkpoint_path_resumes_from_a_named_checkpoint(tmp_path: Path, digits_dir: Path, capsys) -> None:
    first = write_conf(tmp_path, "digits-mlp", digits_dir, workspace=tmp_path / "old", filename="a.conf")
    assert main(["-conf", str(first)]) == 0
    text = first.read_text().replace("checkpoint_freq: 200",
                                     f'checkpoint_freq: 200\ncheckpoint_path: "{tmp_path}/old/checkpoint/step400-proc0.npz"')
    second = tmp_path / "b.conf"
    second.write_text(text.replace(f'workspace: "{tmp_path}/old"', f'workspace: "{tmp_path}/new"'))
    capsys.readouterr()
    assert main(["-conf", str(second)]) == 0
    captured = capsys.readouterr()
    assert "training from step 400" in captured.err
    assert lines(captured.out, "FINAL")[0]["steps"] == 600
    assert complete_steps(LocalStore(tmp_path / "new" / "checkpoint")) == {600}


# ---- progress


class Collector:
    def __init__(self, status: int = 200) -> None:
        self.got: list[dict] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                assert self.headers["Content-Type"] == "application/json"
                collector.got.append(json.loads(body))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/progress"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("status", [200, 500], ids=["accepted", "server-error"])
def test_progress_is_printed_and_posted(tmp_path: Path, digits_dir: Path, monkeypatch, capsys, status: int) -> None:
    collector = Collector(status)
    try:
        monkeypatch.setenv("SCYLLA_PROGRESS_URL", collector.url)
        monkeypatch.setenv("SCYLLA_JOB_ID", "job-42")
        monkeypatch.setenv("MESOS_TASK_ID", "job-42.proc-0.a1")
        assert main(["-conf", str(write_conf(tmp_path, "digits-mlp", digits_dir, train_steps=200))]) == 0
    finally:
        collector.close()
    out = capsys.readouterr().out
    printed = lines(out, "PROGRESS")
    assert collector.got == [{**p, "task": "job-42.proc-0.a1"} for p in printed]  # the POST names its task
    assert set(printed[0]) >= {"job", "proc", "group", "worker", "step", "loss", "accuracy", "samples_per_s", "phase"}
    assert printed[0]["job"] == "job-42"
    final = lines(out, "FINAL")
    assert len(final) == 1 and set(final[0]) >= {"job", "steps", "test_loss", "test_accuracy", "wall_s"}


def test_an_unreachable_progress_url_never_stops_training(tmp_path: Path, digits_dir: Path, monkeypatch,
                                                          capsys) -> None:
    monkeypatch.setenv("SCYLLA_PROGRESS_URL", "http://127.0.0.1:9/progress")
    assert main(["-conf", str(write_conf(tmp_path, "digits-mlp", digits_dir, train_steps=200))]) == 0
    captured = capsys.readouterr()
    assert len(lines(captured.out, "FINAL")) == 1
    assert captured.err.count("posting progress to http://127.0.0.1:9/progress failed") == 1
