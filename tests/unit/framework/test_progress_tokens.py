"""Each job's progress token: made once, kept in the store's own table, handed to containers only in their
environment, sent by the runtime as a Bearer header; and the control token's file."""

from __future__ import annotations

import io
import json
import os
import stat
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import ENV_PROGRESS_TOKEN, PROGRESS_PREFIX
from scylla_singa.framework import core_events as ev
from scylla_singa.framework.control_token import ControlTokenError, ensure_control_token, read_control_token
from scylla_singa.framework.core import CoreConfig, FrameworkCore
from scylla_singa.framework.store import JobStore, JobStoreError
from scylla_singa.runtime.progress_sink import ProgressSink
from scylla_singa.singa_task.task_inputs import read_inputs
from .builders import ARTIFACTS, offer, spec


def _launched_tasks(core: FrameworkCore, token: str) -> list[dict]:
    core.handle(ev.Registered("fw-1"), 0)
    core.handle(ev.SubmitJob(spec(job_id="j1"), token), 0)
    core.handle(ev.JobPrepared("j1", ARTIFACTS), 0)
    out = core.handle(ev.OffersReceived((offer("a1", cpus=8),)), 1)
    return [t for i in out if isinstance(i, ev.Accept) for t in i.tasks]


def test_the_token_is_in_the_task_environment_and_nowhere_else() -> None:
    """The job's token reaches its containers through their environment: never on the command line (which `ps`
    and `docker inspect`'s Args show), never in the job's repr (records get logged)."""
    token = "tok-" + "x" * 40
    core = FrameworkCore(CoreConfig(progress_url="http://h:1/progress"))
    tasks = _launched_tasks(core, token)
    assert tasks
    for task in tasks:
        env = {v["name"]: v["value"] for v in task["command"]["environment"]["variables"]}
        assert env[ENV_PROGRESS_TOKEN] == token
        without_env = {**task, "command": {k: v for k, v in task["command"].items() if k != "environment"}}
        assert token not in json.dumps(without_env)
    assert token not in repr(core.jobs["j1"]) and token not in repr(ev.SubmitJob(spec(), token))


def test_the_store_keeps_the_token_outside_the_record_and_gives_it_back(tmp_path: Path) -> None:
    """A resumed framework must know the token its running containers send; `status --json` shows the record,
    so the token lives in a table of its own, and the store's file is its owner's only."""
    store = JobStore(tmp_path / "f.sqlite")
    core = FrameworkCore()
    token = store.new_progress_token("j1")
    _launched_tasks(core, token)
    store.save(core.jobs["j1"], "fw-1")
    assert token not in store._db().execute("SELECT record FROM jobs").fetchone()[0]
    assert store.load("j1").progress_token == token and store.live_jobs()[0].progress_token == token
    assert len(token) >= 40 and store.new_progress_token("j2") != token
    for name in ("f.sqlite", "f.sqlite-wal", "f.sqlite-shm"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name


def test_an_older_world_readable_store_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "f.sqlite"
    JobStore(path)._db().close()
    path.chmod(0o644)
    JobStore(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_unreadable_store_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "f.sqlite").mkdir()   # a path SQLite cannot open, whoever runs the test
    with pytest.raises(JobStoreError, match=r"cannot open the framework store .*f\.sqlite.*run this command as that user"):
        JobStore(tmp_path / "f.sqlite")


def test_the_control_token_is_made_once_owner_only(tmp_path: Path) -> None:
    token = ensure_control_token(tmp_path)
    assert ensure_control_token(tmp_path) == token == read_control_token(tmp_path) and len(token) >= 40
    assert stat.S_IMODE((tmp_path / "control.token").stat().st_mode) == 0o600


@pytest.mark.parametrize("prepare, reason", [
    pytest.param(lambda p: None, "does not exist: no `scylla-singa run` has used SCYLLA_HOME", id="missing"),
    pytest.param(lambda p: p.write_text(""), "is empty; remove it", id="empty"),
    pytest.param(lambda p: p.mkdir(), "cannot read", id="not-a-file"),
])
def test_an_unreadable_control_token_says_where_and_how_to_fix(tmp_path: Path, prepare, reason) -> None:
    prepare(tmp_path / "control.token")
    with pytest.raises(ControlTokenError, match=reason):
        read_control_token(tmp_path)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a file another user owns unreadable to us")
def test_a_non_root_user_is_told_to_run_as_the_framework_user(tmp_path: Path) -> None:
    """Reading the token as another user: the message says permission and what to do (checked as nobody)."""
    ensure_control_token(tmp_path)
    os.chmod(tmp_path, 0o755)
    pid = os.fork()
    if pid == 0:   # the child becomes nobody and reports through its exit code
        os.setuid(65534)
        try:
            read_control_token(tmp_path)
            os._exit(1)
        except ControlTokenError as exc:
            os._exit(0 if "permission denied" in str(exc) and "as that user" in str(exc) else 2)
    assert os.waitpid(pid, 0)[1] == 0


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str | None, dict]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.headers.get("Authorization"), json.loads(body)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_the_runtime_sends_the_token_as_a_bearer_header_and_never_prints_it() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out, err = io.StringIO(), io.StringIO()
    try:
        sink = ProgressSink(f"http://127.0.0.1:{server.server_address[1]}/progress", out=out, err=err,
                            task="j.proc-0.a1", token="secret-token-123")
        sink.report(PROGRESS_PREFIX, {"job": "j", "step": 1})
        wait_until(lambda: _Recorder.seen, 10, "the POST")
        sink.close()
    finally:
        server.shutdown()
    assert _Recorder.seen == [("Bearer secret-token-123", {"job": "j", "step": 1, "task": "j.proc-0.a1"})]
    assert "secret-token-123" not in out.getvalue() + err.getvalue()


def test_singa_task_reads_the_token_from_its_environment_and_keeps_it_out_of_its_repr(tmp_path: Path) -> None:
    conf = tmp_path / "job.conf"
    conf.write_text("name: 'x'\n")
    inputs = read_inputs(["-conf", str(conf)], {ENV_PROGRESS_TOKEN: "tok-abc", "SCYLLA_PROGRESS_URL": "http://h/p"})
    assert inputs is not None and inputs.progress_token == "tok-abc" and "tok-abc" not in repr(inputs)
