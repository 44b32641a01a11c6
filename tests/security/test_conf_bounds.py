"""Bounded inputs: a job.conf or a policy file that is too big, not UTF-8, too deep or a bomb is refused at once.

Each test states the attack; each asserts the refusal's reason and its
FILE:LINE:COL, and the CLI tests run the venv's `scylla-singa` as a user
would, asserting exit 2, no traceback and a few seconds at most.

Times are CPU seconds (of this process, or of the child for the CLI): the
machines this runs on are shared, and a busy neighbour must not fail a
test, while every blow-up these tests guard against is CPU.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scylla_singa.jobconf import plan as plan_module
from scylla_singa.jobconf.errors import JobConfError
from scylla_singa.jobconf.job_limits import JobLimits
from scylla_singa.jobconf.parse import MAX_JOB_CONF_BYTES, load_job, parse_job_text
from scylla_singa.jobconf.plan import PlanOptions, plan_job
from scylla_singa.placement.policy import MAX_POLICY_BYTES, PolicyError, load_policy
from tests.security.test_fuzz_policy import billion_laughs

REPO = Path(__file__).resolve().parents[2]
DIGITS = (REPO / "examples/digits-mlp/job.conf").read_text()
CLI = Path(sys.executable).parent / "scylla-singa"
CLI_BUDGET_S = 3.0  # CPU seconds: the interpreter and click start in ~0.4 s; a refusal takes milliseconds


def with_cluster(body: str) -> str:
    """The digits conf with `body` as its cluster section (the section is the file's last lines)."""
    return DIGITS[:DIGITS.index("cluster {")] + "cluster {\n" + body + "}\n"


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("body, culprit, flag", [
    ("  nworker_groups: 100000000\n", "nworker_groups", "--max-groups"),
    ("  nserver_groups: 2\n  nworker_groups: 1000\n", "nworker_groups", "--max-groups"),
    ("  nworkers_per_group: 10000\n  nworkers_per_procs: 100\n", "nworkers_per_group", "--max-workers"),
    ("  nservers_per_group: 9000\n  nservers_per_procs: 9000\n", "nservers_per_group", "--max-servers"),
    ("  nworker_groups: 300\n  nserver_groups: 300\n  server_worker_separate: true\n", "nworker_groups",
     "--max-processes"),
], ids=["1e8-groups", "server-groups-divide", "workers", "servers", "processes-separate"])
def test_a_job_past_a_ceiling_is_refused_at_the_line_that_makes_it_big(body: str, culprit: str, flag: str,
                                                                        monkeypatch) -> None:
    """Attack: a cluster section whose counts multiply into a table of millions (minutes, gigabytes to plan).
    Refused before the process table is built (building it here fails the test), at the culprit's line."""
    monkeypatch.setattr(plan_module, "process_table", lambda shape: pytest.fail("a table was built"))
    text = with_cluster(body)
    start = time.process_time()
    with pytest.raises(JobConfError) as info:
        plan_job(parse_job_text(text, "big.conf"))
    assert time.process_time() - start < 0.5
    assert str(info.value).startswith(f"big.conf:{line_of(text, culprit + ':')}:3: this cluster section makes ")
    assert f"raise the ceiling with {flag} N" in str(info.value)


def test_a_raised_ceiling_lets_a_big_job_plan() -> None:
    """A job bigger than the defaults plans once the user raises the ceilings it passes (and only those)."""
    text = with_cluster("  nworker_groups: 600\n")
    with pytest.raises(JobConfError, match="--max-groups"):
        plan_job(parse_job_text(text, "j.conf"))
    with pytest.raises(JobConfError, match="--max-processes"):
        plan_job(parse_job_text(text, "j.conf"), PlanOptions(limits=JobLimits(max_groups=600)))
    plan = plan_job(parse_job_text(text, "j.conf"), PlanOptions(limits=JobLimits(max_groups=600, max_processes=600)))
    assert plan.nprocs == 600


def test_a_job_conf_larger_than_the_cap_is_refused_unread(tmp_path: Path) -> None:
    """Attack: a job.conf of many megabytes (or /dev/zero): at most 128 KiB + 1 byte is read, then refused at 1:1."""
    big = tmp_path / "big.conf"
    big.write_text(DIGITS + "#" * MAX_JOB_CONF_BYTES)
    for path in (big, Path("/dev/zero")):
        with pytest.raises(JobConfError) as info:
            load_job(path)
        assert str(info.value).startswith(f"{path}:1:1: larger than 128 KiB, the most a SINGA job.conf file may hold")


@pytest.mark.parametrize("field", ["gpu: 0\n", "[x] { a: 1 }\n", "gpu: [0, 0, 0, 0, 0, 0, 0, 0]\n"],
                         ids=["repeated-field", "extension-blocks", "lists"])
def test_a_conf_just_under_the_cap_dense_with_fields_is_read_within_a_second(tmp_path: Path, field: str) -> None:
    """Attack: the slowest file the cap lets through: tens of thousands of fields or extension blocks."""
    body = field * ((MAX_JOB_CONF_BYTES - len(DIGITS) - 20) // len(field))
    path = tmp_path / "dense.conf"
    path.write_text(DIGITS.replace("train_one_batch {\n", "train_one_batch {\n" + body) if "[x]" in field
                    else DIGITS + body)
    start = time.process_time()
    plan_job(load_job(path))
    assert time.process_time() - start < 1.0


def test_huge_layer_shapes_plan_without_overflow() -> None:
    """Attack: 40 input dimensions of 2**31-1 each (a 1,240-bit element count): the memory estimate once
    ended in OverflowError; element counts now saturate and the plan is made."""
    text = DIGITS.replace("shape: 64\n", "shape: 2147483647\n" * 40)
    plan = plan_job(parse_job_text(text, "shapes.conf"))
    assert plan.procs[0].demand.mem_mb > 2**30  # MB: far beyond any agent, so the job waits with a reason


def test_non_utf8_bytes_are_refused_at_the_first_bad_byte(tmp_path: Path) -> None:
    """Attack: Latin-1 or binary bytes in a job.conf; the refusal names the byte and its line and column."""
    path = tmp_path / "latin1.conf"
    path.write_bytes(DIGITS.replace('name: "digits-mlp"', 'name: "digits-\xe9"').encode("latin-1"))
    with pytest.raises(JobConfError) as info:
        load_job(path)
    assert str(info.value).startswith(f"{path}:{line_of(DIGITS, 'name:')}:15: not UTF-8 text: byte 0xe9")


def test_nesting_thousands_deep_is_refused_before_the_recursive_parser(tmp_path: Path) -> None:
    """Attack: an extension block nested 100,000 deep (protobuf's parser recurses per level: RecursionError)."""
    text = DIGITS + "[x] { " * 100_000
    with pytest.raises(JobConfError) as info:
        parse_job_text(text, "deep.conf")
    assert re.match(rf"deep.conf:{DIGITS.count(chr(10)) + 1}:\d+: blocks nested more than 64 deep", str(info.value))


def test_policy_alias_bomb_is_refused_at_the_first_alias(tmp_path: Path) -> None:
    """Attack: billion laughs, 10**9 strings from a 1 KB policy file (loading it ran over 60 s)."""
    path = tmp_path / "bomb.yaml"
    path.write_text(billion_laughs(9))
    start = time.process_time()
    with pytest.raises(PolicyError) as info:
        load_policy(str(path))
    assert time.process_time() - start < 0.5
    assert str(info.value).startswith(f"{path}:4:10: an alias (*a0): policy files may not use anchors and aliases")


@pytest.mark.parametrize("text, where, reason", [
    ("name: d\nfilters: " + "[" * 40 + "]" * 40 + "\n", "2:41", "nested more than 32 levels deep"),
    # libyaml stops at its own limit (1,000 levels) before the event reaches 33: positioned either way
    ("name: d\nfilters: " + "[" * 10_000 + "]" * 10_000 + "\n", "2:1009", "exceeded maximum nesting depth"),
    ("name: k\nfilters: [resources-fit]\n? [a, b]\n: 1\n", "3:3", "a mapping key must be a plain value"),
    ("name: k\nfilters: [resources-fit]\n{a: 1}: 2\n", "3:1", "a mapping key must be a plain value"),
    ("name: k\ndescription: 2024-13-45\nfilters: [resources-fit]\n", "2:14", "cannot read the value '2024-13-45'"),
    ("name: k\nfilters: 5\n", "2:10", "filters is a list of plugins"),
    ("name: k\nfilters: [resources-fit]\nscores: [{name: spread, weight: .nan}]\n", "3:33", "weight must be a number"),
    ("name: k\nfilters: [resources-fit]\nstarts: [me.yaml]\n", "3:10", "starts from this policy again"),
], ids=["deep", "deeper-than-libyaml", "list-key", "map-key", "bad-date", "wrong-type", "nan-weight", "starts-cycle"])
def test_hostile_policy_shapes_are_refused_with_a_position(tmp_path: Path, monkeypatch, text: str, where: str,
                                                           reason: str) -> None:
    """Attack: YAML shapes that crashed the policy loader with a traceback (recursion, unhashable keys,
    unconstructible scalars, wrong types) or made it loop (a policy whose `starts` names itself)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "me.yaml"
    path.write_text(text)
    with pytest.raises(PolicyError) as info:
        load_policy(str(path))
    assert str(info.value).startswith(f"{path}:{where}: ") and reason in str(info.value), str(info.value)


def test_policy_files_have_a_size_cap_and_must_be_utf8(tmp_path: Path) -> None:
    """Attack: a huge policy file (YAML parsing is not free) and one in Latin-1."""
    huge, latin = tmp_path / "huge.yaml", tmp_path / "latin.yaml"
    huge.write_text("name: h\nfilters: [resources-fit]\n" + "# padding\n" * MAX_POLICY_BYTES)
    latin.write_bytes("name: caf\xe9\nfilters: [resources-fit]\n".encode("latin-1"))
    with pytest.raises(PolicyError, match=r"^.*huge\.yaml:1:1: larger than 64 KiB, the most a policy file may hold"):
        load_policy(str(huge))
    with pytest.raises(PolicyError, match=r"^.*latin\.yaml:1:10: not UTF-8 text: byte 0xe9"):
        load_policy(str(latin))


def run_cli(*args: str, home: Path) -> tuple[subprocess.CompletedProcess, float]:
    """Run the venv's scylla-singa; (its result, the CPU seconds it used)."""
    env = {**os.environ, "SCYLLA_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=60, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


NASTY_CONFS = {
    "groups-1e8.conf": with_cluster("  nworker_groups: 100000000\n").encode(),
    "groups-1e6.conf": with_cluster("  nworker_groups: 1000000\n").encode(),
    "groups-float-1e8.conf": with_cluster("  nworker_groups: 1e8\n").encode(),
    "latin1.conf": DIGITS.replace("digits-mlp", "digits-\xe9").encode("latin-1"),
    "deep.conf": (DIGITS + "[x] { " * 100_000).encode(),
    "huge.conf": (DIGITS + "#" * (2 * MAX_JOB_CONF_BYTES)).encode(),
}


@pytest.mark.parametrize("name", sorted(NASTY_CONFS))
def test_plan_refuses_nasty_confs_with_exit_2_and_a_position(tmp_path: Path, name: str) -> None:
    """Attack: `scylla-singa plan` on a 1e8-group conf (once a MemoryError traceback), a 1e6-group one (once
    32 s and 155 MB of output), non-UTF-8, nesting 100,000 deep, 2 MiB: exit 2, FILE:LINE:COL, no traceback."""
    path = tmp_path / name
    path.write_bytes(NASTY_CONFS[name])
    done, elapsed = run_cli("plan", str(path), home=tmp_path)
    assert done.returncode == 2, done.stderr
    assert re.match(rf"^{re.escape(str(path))}:\d+:\d+: \S", done.stderr), done.stderr
    assert "Traceback" not in done.stderr + done.stdout and done.stdout == ""
    assert elapsed < CLI_BUDGET_S, f"{elapsed:.1f} s of CPU"


def test_plan_help_names_the_ceilings_and_raising_one_plans_the_job(tmp_path: Path) -> None:
    """The ceilings are flags of `plan` (and `run`), shown in --help with their defaults."""
    help_text = run_cli("plan", "--help", home=tmp_path)[0].stdout
    for flag in ("--max-processes", "--max-groups", "--max-workers", "--max-servers"):
        assert flag in help_text
    path = tmp_path / "600.conf"
    path.write_text(with_cluster("  nworker_groups: 600\n"))
    refused, _ = run_cli("plan", "--json", str(path), home=tmp_path)
    assert refused.returncode == 2 and "--max-groups N" in refused.stderr
    done, _ = run_cli("plan", "--json", "--max-groups", "600", "--max-processes", "600", str(path), home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"nprocs": 600' in done.stdout


def test_run_refuses_a_policy_bomb_before_contacting_any_master(tmp_path: Path) -> None:
    """Attack: `scylla-singa run --policy bomb.yaml`: refused as `error: FILE:LINE:COL: ...`, exit 2, at once,
    with no master (none is given or started: the refusal comes first)."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs(12))
    done, elapsed = run_cli("run", "--runtime", "singa-py", "--policy", str(bomb),
                            str(REPO / "examples/digits-mlp/job.conf"), home=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {bomb}:4:10: an alias (*a0)"), done.stderr
    assert "Traceback" not in done.stderr and elapsed < CLI_BUDGET_S


def test_run_refuses_a_job_past_the_ceiling_and_names_the_flag(tmp_path: Path) -> None:
    """Attack: `scylla-singa run` on a 1e8-group conf: refused before anything starts, with the flag to raise."""
    path = tmp_path / "big.conf"
    path.write_bytes(NASTY_CONFS["groups-1e8.conf"])
    done, elapsed = run_cli("run", "--runtime", "singa-py", str(path), home=tmp_path)
    assert done.returncode == 2, done.stderr
    assert re.match(rf"^error: {re.escape(str(path))}:\d+:3: this cluster section makes 100,000,000 worker groups",
                    done.stderr), done.stderr
    assert "--max-groups N" in done.stderr and "Traceback" not in done.stderr and elapsed < CLI_BUDGET_S
