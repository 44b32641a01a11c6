"""The framework's durable memory: its framework id, every job, and progress.

SQLite in $SCYLLA_HOME/framework.sqlite, so a restarted `scylla-singa`
re-subscribes with the same framework id and carries its jobs on, and
`scylla-singa jobs/status` can answer from another terminal. A job row is
the JSON of its record; the plan is recomputed from the stored job.conf
text. Thread-safe: one connection per thread.

The file (and SQLite's -wal and -shm files beside it, which take its mode)
is readable by its owner only: it holds each job's progress token
(framework/api_auth.py), in a table of its own, outside the job record that
`status --json` and the API show.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from scylla_singa.delivery.job_files import Artifacts
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import plan_job
from .model import Job, JobSpec, JobState, TaskRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY, state TEXT NOT NULL, framework_id TEXT, submitted_at REAL NOT NULL,
  updated_at REAL NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS progress (
  job_id TEXT NOT NULL, at REAL NOT NULL, proc INTEGER, grp INTEGER, worker INTEGER, step INTEGER,
  phase TEXT, loss REAL, accuracy REAL, samples_per_s REAL, task TEXT);
CREATE INDEX IF NOT EXISTS progress_job ON progress (job_id, at);
CREATE TABLE IF NOT EXISTS progress_tokens (job_id TEXT PRIMARY KEY, token TEXT NOT NULL);
"""
OWNER_ONLY = 0o600
# Columns added since the first release, for stores created before them.
ADDED_COLUMNS = {"progress": {"task": "TEXT"}}


class JobStoreError(Exception):
    """The store cannot be opened: the message says which file, why, and what to do."""


class JobStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            owner_only(self.path)
            self._create()
        except (sqlite3.Error, OSError) as exc:
            raise JobStoreError(f"cannot open the framework store {self.path}: {exc}; it is readable only by the user "
                             "who runs the framework (root, as a rule): run this command as that user, or set "
                             "SCYLLA_HOME to the directory of a framework you run") from None

    def _create(self) -> None:
        with self._db() as db:
            db.executescript(SCHEMA)
            for table, columns in ADDED_COLUMNS.items():
                have = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
                for name, kind in columns.items():
                    if name not in have:
                        db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")

    def _db(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            self._local.conn = conn
        return conn

    # --- framework id and where its master is -------------------------------------

    @staticmethod
    def leader_key(framework_id: str | None) -> str:
        """Meta key of the address of the master the framework last (re)subscribed to: the leader then."""
        return f"master:{framework_id}"

    def set_master_lost(self, framework_id: str, since: float | None) -> None:
        """Record that the framework lost its master at `since` (epoch s), or (None) is subscribed again."""
        self.set_meta(f"master_lost:{framework_id}", "" if since is None else repr(since))

    def master_lost_since(self, framework_id: str | None) -> float | None:
        """When the framework lost its master, if it has not re-subscribed since: task states are unconfirmed."""
        value = self.get_meta(f"master_lost:{framework_id}")
        return float(value) if value else None

    @staticmethod
    def master_url_key(framework_id: str | None) -> str:
        """Meta key of --master as the user gave it (a zk:// URL names no master: it finds the leader)."""
        return f"master_url:{framework_id}"

    def get_meta(self, key: str) -> str | None:
        row = self._db().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._db().execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # --- jobs -------------------------------------------------------------------

    def save(self, job: Job, framework_id: str | None) -> None:
        self._db().execute(
            "INSERT OR REPLACE INTO jobs (job_id, state, framework_id, submitted_at, updated_at, record) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (job.job_id, job.state.value, framework_id, job.spec.submitted_at, time.time(),
             json.dumps(job_to_dict(job))))

    def load(self, job_id: str) -> Job | None:
        row = self._db().execute("SELECT record FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return self._with_token(job_from_dict(json.loads(row[0]))) if row else None

    def find(self, prefix: str) -> list[str]:
        rows = self._db().execute("SELECT job_id FROM jobs WHERE job_id = ? OR job_id LIKE ? ORDER BY submitted_at",
                                  (prefix, prefix.replace("%", "") + "%")).fetchall()
        exact = [r[0] for r in rows if r[0] == prefix]
        return exact or [r[0] for r in rows]

    def jobs(self) -> Iterator[tuple[str, str, str | None, float]]:
        """(job id, state, framework id, submitted at), oldest first."""
        yield from self._db().execute(
            "SELECT job_id, state, framework_id, submitted_at FROM jobs ORDER BY submitted_at").fetchall()

    def live_jobs(self) -> list[Job]:
        rows = self._db().execute("SELECT record FROM jobs WHERE state NOT IN ('FINISHED', 'FAILED', 'KILLED') "
                                  "ORDER BY submitted_at").fetchall()
        return [self._with_token(job_from_dict(json.loads(r[0]))) for r in rows]

    # --- each job's progress token -------------------------------------------------

    def new_progress_token(self, job_id: str) -> str:
        """A fresh random token for `job_id`'s progress reports, stored before it is handed to any container."""
        token = secrets.token_urlsafe(32)
        self._db().execute("INSERT OR REPLACE INTO progress_tokens (job_id, token) VALUES (?, ?)", (job_id, token))
        return token

    def progress_token(self, job_id: str) -> str:
        """The job's progress token; "" for a job stored before tokens existed."""
        row = self._db().execute("SELECT token FROM progress_tokens WHERE job_id = ?", (job_id,)).fetchone()
        return row[0] if row else ""

    def _with_token(self, job: Job) -> Job:
        job.progress_token = self.progress_token(job.job_id)
        return job

    # --- progress ---------------------------------------------------------------

    def add_progress(self, job_id: str, p: dict[str, Any]) -> None:
        self._db().execute(
            "INSERT INTO progress (job_id, at, proc, grp, worker, step, phase, loss, accuracy, samples_per_s, task) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (job_id, time.time(), p.get("proc"), p.get("group"), p.get("worker"), p.get("step"),
             p.get("phase", "train"), p.get("loss"), p.get("accuracy"), p.get("samples_per_s"),
             p.get("task") if isinstance(p.get("task"), str) else None))

    def progress(self, job_id: str, limit: int = 2000) -> list[dict[str, Any]]:
        rows = self._db().execute(
            "SELECT at, proc, grp, worker, step, phase, loss, accuracy, samples_per_s, task FROM progress "
            "WHERE job_id = ? ORDER BY at DESC LIMIT ?", (job_id, limit)).fetchall()
        keys = ("at", "proc", "group", "worker", "step", "phase", "loss", "accuracy", "samples_per_s", "task")
        return [dict(zip(keys, r)) for r in reversed(rows)]


def owner_only(path: Path) -> None:
    """Make the store's file readable by its owner only: created so, and an older one made so.

    SQLite creates its -wal and -shm files with the database's mode, so they
    follow; ones left by an older version are narrowed too.
    """
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, OWNER_ONLY))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            if file.stat().st_mode & 0o777 != OWNER_ONLY and file.stat().st_uid == os.getuid():
                file.chmod(OWNER_ONLY)
        except FileNotFoundError:
            pass


def job_to_dict(job: Job) -> dict[str, Any]:
    return {
        "spec": dataclasses.asdict(job.spec),
        "state": job.state.value, "attempt": job.attempt, "restarts": job.restarts,
        "tasks": [dataclasses.asdict(t) for t in job.tasks.values()],
        "artifacts": dataclasses.asdict(job.artifacts) if job.artifacts else None,
        "waiting_reason": job.waiting_reason, "failure": job.failure, "failed_task": job.failed_task,
        "restart_reasons": job.restart_reasons, "not_before": job.not_before, "kill_deadline": job.kill_deadline,
        "history": job.history, "result": job.result,
    }


def job_from_dict(d: dict[str, Any]) -> Job:
    spec = JobSpec(**{**d["spec"], "env": tuple(tuple(kv) for kv in d["spec"].get("env", ()))})
    plan = plan_job(parse_job_text(spec.conf_text, spec.conf_path), spec.plan_options)
    art = d.get("artifacts")
    artifacts = None if art is None else Artifacts(
        network=art["network"], volumes=tuple(art["volumes"]), uris=tuple(art["uris"]),
        workspace=art["workspace"], env=tuple(tuple(x) for x in art["env"]))
    job = Job(spec, plan, JobState(d["state"]), d["attempt"], d["restarts"],
              {t["task_id"]: TaskRecord(**t) for t in d["tasks"]}, artifacts, d["waiting_reason"], d["failure"],
              d["failed_task"], list(d["restart_reasons"]), d["not_before"], d["kill_deadline"],
              [tuple(h) for h in d["history"]], dict(d["result"]))
    return job
