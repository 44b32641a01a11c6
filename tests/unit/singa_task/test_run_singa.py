"""The wrapper around one SINGA process, with SINGA replaced by a replay of its recorded log.

The docker tests run the real thing; these check the wrapper's own work
quickly: the conf SINGA gets, the resume point, the reports and exit codes.
"""

from __future__ import annotations

import io
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scylla_singa.singa_task import run_singa as task

from .test_checkpoints import REAL
from .test_glog import LOGS

FAKE_SINGA = '''#!{python}
import os, shutil, sys
args = sys.argv[1:]
shutil.copyfile(args[args.index("-conf") + 1], os.environ["FAKE_CONF_COPY"])
sys.stderr.write(open(os.environ["FAKE_LOG"]).read())
sys.exit(int(os.environ["FAKE_EXIT"]))
'''
CONF = '''name: "tiny"
train_steps: 600
neuralnet { layer { name: "data" type: kCSVInput store_conf { path: "train.csv" batchsize: 64 } include: kTrain } }
cluster { workspace: "ws-from-conf" }
'''


@pytest.fixture()
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    fake = tmp_path / "fake-singa"
    fake.write_text(FAKE_SINGA.format(python=sys.executable))
    fake.chmod(0o755)
    (tmp_path / "job.conf").write_text(CONF)
    (tmp_path / "train.csv").write_text("0,1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(task, "SINGA_LOCAL", str(fake))
    monkeypatch.setenv("FAKE_CONF_COPY", str(tmp_path / "conf-singa-got"))
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield tmp_path
    for s, h in handlers.items():
        signal.signal(s, h)


def run(sandbox: Path, monkeypatch: pytest.MonkeyPatch, log: str, code: int, *argv: str) -> tuple[int, str, str]:
    monkeypatch.setenv("FAKE_LOG", str(LOGS / log))
    monkeypatch.setenv("FAKE_EXIT", str(code))
    out, err = io.StringIO(), io.StringIO()
    rc = task.main(["-conf", "job.conf", "-workspace", str(sandbox / "ws"), *argv], out, err)
    return rc, out.getvalue(), err.getvalue()


def test_a_finished_run_reports_progress_and_final(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, err = run(sandbox, monkeypatch, "digits-mlp-local.log", 0)
    assert rc == 0
    lines = out.splitlines()
    assert sum(line.startswith("PROGRESS ") for line in lines) == 15 and lines[-1].startswith("FINAL ")
    assert '"test_step": 400' in lines[-1] and '"job": "tiny"' in lines[-1]
    assert "Train @ step 550  Loss = " in err and err.rstrip().endswith("singa-task: finished")
    got = (sandbox / "conf-singa-got").read_text()
    assert f'workspace: "{sandbox / "ws"}"' in got and got.count("\n") == CONF.count("\n")
    assert (sandbox / "ws").is_dir()


def test_a_conf_error_is_exit_2_with_the_place(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, err = run(sandbox, monkeypatch, "bad-enum.log", 134)
    assert rc == 2 and "FINAL" not in out
    assert err.rstrip().splitlines()[-1] == \
        'singa-task: job.conf:80:5: Unknown enumeration value of "kNoSuchLayer" for field "type".'


def test_a_crash_is_exit_1(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, _, err = run(sandbox, monkeypatch, "bad-unregistered.log", 136)
    assert rc == 1 and err.rstrip().endswith("SINGA died with signal 8 (exit 136)")


def test_resume_hands_singa_the_newest_complete_step(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkpoints = sandbox / "ws" / "checkpoint"
    checkpoints.mkdir(parents=True)
    for step in (200, 400):
        (checkpoints / f"step{step}-worker0").write_bytes(REAL.read_bytes())
    (checkpoints / "step600-worker0").write_bytes(REAL.read_bytes()[:1000])
    monkeypatch.setenv("SCYLLA_ATTEMPT", "3")
    rc, _, err = run(sandbox, monkeypatch, "digits-mlp-local.log", 0, "-resume")
    assert rc == 0 and "singa-task: -resume: from step 400 (step400-worker0)" in err
    got = (sandbox / "conf-singa-got").read_text()
    copy = sandbox / "ws" / "resume" / "attempt-3" / "step400-worker0"
    assert f'checkpoint_path: "{copy}"' in got and "\nstep: 400\n" in got and "reset_param_version: false" in got
    assert copy.read_bytes() == REAL.read_bytes()


def test_missing_inputs_stop_before_singa_runs(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.remove(sandbox / "train.csv")
    rc, _, err = run(sandbox, monkeypatch, "digits-mlp-local.log", 0)
    assert rc == 2 and not (sandbox / "conf-singa-got").exists()
    assert "job.conf:3:63: layer 'data': path 'train.csv' does not exist in the container" in err
