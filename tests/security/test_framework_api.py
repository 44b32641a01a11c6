"""The framework's HTTP API under attack: forged progress, open job views, oversized reports, leaked tokens.

Most tests run a real ApiServer (aiohttp on a loopback port) with the job
view's routes and a real JobStore, as `scylla-singa run` wires them, and
talk to it over HTTP with `requests`. The last one runs the whole
framework on its embedded master with a real container and looks for the
job's token where it must not be.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import docker.errors
import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.contracts import ENV_PROGRESS_TOKEN
from scylla_singa.framework.api_auth import CONTROL_COOKIE
from scylla_singa.framework.api_server import ApiServer
from scylla_singa.framework.control_token import ensure_control_token
from scylla_singa.framework.progress_book import ProgressBook
from scylla_singa.framework.progress_report import PROGRESS_BODY_LIMIT
from scylla_singa.framework.store import JobStore
from scylla_singa.swarm.overlays import ensure_swarm
from scylla_singa.ui import job_view
from tests.support.scylla_cli import CLI, REPO, ScyllaCli, last_json

CONTROL = "control-token-for-the-test-0123456789"
TOKENS = {"job-a": "progress-token-of-a-0123456789", "job-b": "progress-token-of-b-0123456789"}


class Api:
    """A running ApiServer with the job view, its store and book, and what it was asked to kill."""

    def __init__(self, tmp: Path) -> None:
        self.store = JobStore(tmp / "framework.sqlite")
        self.book = ProgressBook()
        self.shell = None
        self.killed: list[str] = []
        self.server = ApiServer(self.book, lambda: [{"job": j} for j in TOKENS], self._keep, self._kill, CONTROL,
                                TOKENS.get, host="127.0.0.1")
        self.server.extra_routes += job_view.routes(self)
        self.url = f"http://127.0.0.1:{self.server.start()}"

    def jobs(self) -> list:   # job_view's SessionLike
        return []

    def _keep(self, p: dict) -> bool:
        self.store.add_progress(p["job"], p)
        return True

    def _kill(self, job: str) -> bool:
        self.killed.append(job)
        return job in TOKENS

    def stored(self, job: str = "job-a") -> list[dict]:
        return self.store.progress(job)

    def post(self, body: bytes | dict, token: str | None, **headers: str) -> requests.Response:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        auth = {"Authorization": f"Bearer {token}"} if token is not None else {}
        return requests.post(f"{self.url}/progress", data=data, timeout=10,
                             headers={"Content-Type": "application/json", **auth, **headers})


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    a = Api(tmp_path)
    yield a
    a.server.stop()


REPORT = {"job": "job-a", "proc": 0, "group": 0, "worker": 0, "step": 100, "phase": "test", "accuracy": 0.999}


# ---- forged progress ------------------------------------------------------------------

def test_progress_without_a_token_is_refused(api: Api) -> None:
    """Attack: anyone on the overlay POSTs a report claiming test accuracy 0.999 for a running job."""
    resp = api.post(REPORT, token=None)
    assert resp.status_code == 401 and "needs `Authorization: Bearer <token>`" in resp.text, resp.text
    assert "SCYLLA_PROGRESS_TOKEN" in resp.text and resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert api.stored() == [] and api.book.history("job-a") == []


@pytest.mark.parametrize("token", [
    pytest.param(TOKENS["job-b"], id="another-jobs-token"),
    pytest.param(CONTROL, id="the-control-token"),
    pytest.param("guess", id="a-guess"),
    pytest.param("", id="empty"),
])
def test_progress_with_a_token_not_of_its_job_is_refused(api: Api, token: str) -> None:
    """Attack: a container of job B (which holds B's token), or someone guessing, reports for job A."""
    resp = api.post(REPORT, token=token)
    assert resp.status_code == 403, resp.text
    assert "progress for job 'job-a' refused: the token is not that job's progress token" in resp.text
    assert api.stored() == [] and api.book.history("job-a") == []


def test_progress_for_a_job_the_framework_does_not_run_is_refused(api: Api) -> None:
    """Attack: a report for a job id nobody runs (there is no token it could hold)."""
    resp = api.post({**REPORT, "job": "job-x"}, token=TOKENS["job-a"])
    assert resp.status_code == 403 and "job 'job-x' refused" in resp.text
    assert api.stored("job-x") == []


def test_progress_with_its_jobs_token_is_taken(api: Api) -> None:
    resp = api.post({**REPORT, "accuracy": 0.5}, token=TOKENS["job-a"])
    assert resp.status_code == 204, resp.text
    assert [(p["step"], p["accuracy"]) for p in api.stored()] == [(100, 0.5)]
    assert api.book.summary("job-a").test_accuracy == 0.5


# ---- bounded progress -----------------------------------------------------------------

@pytest.mark.parametrize("body, status, reason", [
    pytest.param({**REPORT, "note": "x" * 900_000}, 413, f"the body is over {PROGRESS_BODY_LIMIT} bytes",
                 id="900KB-field"),
    pytest.param(b" " * (PROGRESS_BODY_LIMIT + 1), 413, "over 65536 bytes", id="65KiB-of-spaces"),
    pytest.param({**REPORT, "task": "t" * 300}, 400, "'task' has 300 characters, at most 256", id="300-char-task"),
    pytest.param({**REPORT, "phase": "p" * 1000}, 400, "'phase' must be one of", id="long-phase"),
    pytest.param({**REPORT, **{f"k{i}": 0 for i in range(40)}}, 400, "at most 32 are taken", id="48-fields"),
    pytest.param({**REPORT, "step": 2 ** 64}, 400, "step must be between 0 and", id="step-past-sqlite"),
    pytest.param(b'{"job": "job-a", "step": 1, "loss": 1e999, "x": NaN}', 400, "'x' must be a finite number",
                 id="nan-field"),
    pytest.param({**REPORT, "metrics": {"a": {"b": 1}}}, 400, "metrics.a must be a number", id="nested-metrics"),
    pytest.param(b"[" * 30_000 + b"]" * 30_000, 400, "nested too deeply", id="deep-nesting"),
    pytest.param(b"not json", 400, "the body is not JSON", id="not-json"),
])
def test_an_oversized_or_malformed_report_is_refused_and_nothing_is_stored(api: Api, body, status, reason) -> None:
    """Attack: a report with its job's own token but a 900 KB field (once stored in SQLite unbounded), a
    number SQLite cannot hold, deep nesting, or no JSON at all."""
    resp = api.post(body, token=TOKENS["job-a"])
    assert resp.status_code == status and reason in resp.text, (resp.status_code, resp.text[:300])
    assert api.stored() == [] and api.book.history("job-a") == []
    assert api.store._db().execute("SELECT count(*) FROM progress").fetchone()[0] == 0


def test_a_report_sent_in_small_chunks_is_read_whole_and_a_long_chunked_one_is_cut_off(api: Api) -> None:
    """A body without Content-Length (chunked) is read to its end when small, and refused once over the bound
    without the rest being read (a sender cannot make the framework buffer an endless body)."""
    report = json.dumps({**REPORT, "note": "n" * 200}).encode()
    pieces = (report[i:i + 7] for i in range(0, len(report), 7))
    ok = requests.post(f"{api.url}/progress", data=pieces, timeout=10,
                       headers={"Authorization": f"Bearer {TOKENS['job-a']}"})
    assert ok.status_code == 204, ok.text
    endless = (b" " * 4096 for _ in range(100))   # 400 KiB of whitespace, chunked
    cut = requests.post(f"{api.url}/progress", data=endless, timeout=10,
                        headers={"Authorization": f"Bearer {TOKENS['job-a']}"})
    assert cut.status_code == 413 and "over 65536 bytes" in cut.text
    assert [p["step"] for p in api.stored()] == [100]


# ---- everything else needs the control token -------------------------------------------

READ_ROUTES = ["/api/jobs", "/api/jobs/job-a", "/", "/ui/api/jobs", "/ui/api/jobs/job-a", "/ui/log",
               "/ui/api/log?agent=a&task=t&file=stdout", "/metrics", "/ui/static/jobs.js"]


@pytest.mark.parametrize("path", READ_ROUTES)
def test_job_list_views_and_metrics_need_the_control_token(api: Api, path: str) -> None:
    """Attack: read every job, its hosts and curves, the task logs, the metrics, from anywhere on the network."""
    resp = requests.get(f"{api.url}{path}", timeout=10)
    assert resp.status_code == 401, resp.text
    assert "needs the framework's control token" in resp.text and "control.token" in resp.text
    wrong = requests.get(f"{api.url}{path}", headers={"Authorization": f"Bearer {TOKENS['job-a']}"}, timeout=10)
    assert wrong.status_code == 401 and "is not this framework's control token" in wrong.text


@pytest.mark.parametrize("path", ["/api/jobs", "/api/jobs/job-a", "/", "/ui/api/jobs", "/metrics"])
def test_the_control_token_opens_them(api: Api, path: str) -> None:
    resp = requests.get(f"{api.url}{path}", headers={"Authorization": f"Bearer {CONTROL}"}, timeout=10)
    assert resp.status_code == 200, (path, resp.status_code, resp.text[:200])


def test_kill_needs_the_control_token_as_a_header(api: Api) -> None:
    """Attack: stop someone's job with no token, with a job's progress token, or with a browser's cookie
    (which another site could make a browser send)."""
    cookie = {CONTROL_COOKIE: CONTROL}
    tries = [requests.post(f"{api.url}/api/jobs/job-a/kill", timeout=10),
             requests.post(f"{api.url}/api/jobs/job-a/kill", headers={"Authorization": f"Bearer {TOKENS['job-a']}"},
                           timeout=10),
             requests.post(f"{api.url}/api/jobs/job-a/kill", cookies=cookie, timeout=10)]
    assert [r.status_code for r in tries] == [401, 401, 401], [r.text for r in tries]
    assert "needs the framework's control token" in tries[2].text and api.killed == []
    ok = requests.post(f"{api.url}/api/jobs/job-a/kill", headers={"Authorization": f"Bearer {CONTROL}"}, timeout=10)
    assert ok.status_code == 202 and api.killed == ["job-a"]


def test_a_browser_signs_in_once_and_the_token_leaves_the_address(api: Api) -> None:
    """`?token=` once: a redirect to the address without it, and an HttpOnly SameSite=Strict cookie that
    lets the page and its scripts read; a wrong `?token=` is refused."""
    wrong = requests.get(f"{api.url}/?token=guess", timeout=10, allow_redirects=False)
    assert wrong.status_code == 401 and "is not this framework's control token" in wrong.text
    http = requests.Session()
    resp = http.get(f"{api.url}/ui/log?task=t&token={CONTROL}", timeout=10, allow_redirects=False)
    assert resp.status_code == 303 and resp.headers["Location"] == "/ui/log?task=t"
    cookie = resp.headers["Set-Cookie"]
    assert f"{CONTROL_COOKIE}={CONTROL}" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert http.get(f"{api.url}/ui/api/jobs", timeout=10).status_code == 200
    assert http.get(f"{api.url}/", timeout=10).status_code == 200


def test_health_is_open_and_reveals_nothing(api: Api) -> None:
    resp = requests.get(f"{api.url}/health", timeout=10)
    assert resp.status_code == 200 and resp.json() == {"ok": True}


# ---- the commands that read the store and the token --------------------------------------

@pytest.fixture
def root_home() -> Iterator[Path]:
    """A SCYLLA_HOME as root's framework leaves it, in a directory other users can reach (pytest's is 0700)."""
    with tempfile.TemporaryDirectory(prefix="scylla-sec-fwapi-") as tmp:
        home = Path(tmp) / "home"
        JobStore(home / "framework.sqlite").new_progress_token("j")
        ensure_control_token(home)
        for path in (Path(tmp), home):
            path.chmod(0o755)
        yield home


def as_nobody(home: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *CLI, *command],
                          env={**os.environ, "SCYLLA_HOME": str(home)}, cwd="/", capture_output=True, text=True,
                          timeout=60)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run the commands as another user (nobody)")
@pytest.mark.parametrize("command", [["jobs"], ["status", "j"], ["logs", "j"], ["kill", "j"], ["ui"]])
def test_another_local_user_cannot_read_jobs_or_tokens_and_is_told_why(root_home: Path, command) -> None:
    """Attack: a local user other than the framework's reads the store (every job's progress token is in it)
    or the control token through the commands. They are refused with what, where and how to fix, no traceback."""
    r = as_nobody(root_home, *command)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"cannot open the framework store {root_home}/framework.sqlite" in r.stderr
    assert "run this command as that user" in r.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run the commands as another user (nobody)")
def test_a_home_another_user_cannot_reach_is_a_clear_error(root_home: Path) -> None:
    root_home.chmod(0o700)
    r = as_nobody(root_home / "sub", "jobs")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"cannot use SCYLLA_HOME={root_home}/sub (Permission denied)" in r.stderr


# ---- the whole framework: where the token travels ------------------------------------------

@pytest.fixture
def swarm_engine() -> docker.DockerClient:
    """This machine's Docker engine as a swarm manager (job overlays need one); fails, never skips, without it."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(f"no Docker engine answers ({exc}); run `make setup` first", pytrace=False)
    ensure_swarm(client)
    return client


def test_the_progress_token_is_in_the_containers_env_only_and_never_logged(tmp_path, swarm_engine) -> None:
    """Attack: read a job's progress token from the framework's output or log, or from the container's command
    line (`docker inspect` Args, `ps`), then forge its reports. The token must be only in the container's
    environment; with it the runtime's reports get through, and another token is refused by the live framework."""
    scylla = ScyllaCli(tmp_path / "home", swarm_engine, tmp_path)
    conf = tmp_path / "long.conf"
    conf.write_text((REPO / "examples/digits-mlp/job.conf").read_text().replace("train_steps: 600",
                                                                                  "train_steps: 5000000"))
    try:
        p = scylla.start("run", "--json", str(conf))
        job = wait_until(scylla.job_ids, 60, "the job to be submitted")[0]
        wait_until(lambda: scylla.store().progress(job), 180, "the runtime's first progress report to be taken")
        token = scylla.store().progress_token(job)
        container = wait_until(lambda: scylla.containers(job, running=True), 60, "the job's container")[0]
        container.reload()
        attrs = container.attrs
        assert f"{ENV_PROGRESS_TOKEN}={token}" in attrs["Config"]["Env"]
        assert token not in json.dumps([attrs.get("Args"), attrs.get("Path"), attrs["Config"].get("Cmd"),
                                        attrs["Config"].get("Entrypoint"), attrs["Config"].get("Labels")])
        fid = next(f for j, _, f, _ in scylla.store().jobs() if j == job)
        api = scylla.store().get_meta(f"api:{fid}")
        forged = requests.post(f"{api}/progress", json={"job": job, "step": 1, "phase": "test", "accuracy": 0.999},
                               headers={"Authorization": "Bearer not-the-token"}, timeout=10)
        assert forged.status_code == 403 and "not that job's progress token" in forged.text
        assert requests.get(f"{api}/api/jobs", timeout=10).status_code == 401
        p.send_signal(signal.SIGINT)   # the framework kills the job and ends
        p.wait(120)
        out, err = scylla.output(p)
        assert last_json(out)["state"] == "KILLED", err[-2000:]
        log = (scylla.home / "framework.log").read_text() if (scylla.home / "framework.log").exists() else ""
        for name, text in (("stdout", out), ("stderr", err), ("framework.log", log)):
            assert token not in text, f"the progress token is in the framework's {name}"
        scylla.assert_nothing_left(job)
    finally:
        scylla.cleanup()
