"""The job plan: demand, traffic edges, and `scylla-singa plan` output and errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scylla_singa.cli import main
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import PlanOptions, load_plan, plan_job

REPO = Path(__file__).resolve().parent.parent.parent
FRAMEWORKS = REPO / "examples" / "frameworks"
DIGITS = REPO / "examples/digits-mlp/job.conf"


def test_digits_plan_is_one_process_with_the_whole_model() -> None:
    plan = load_plan(REPO / "examples/digits-mlp/job.conf")
    assert plan.nprocs == 1 and plan.edges == ()
    assert plan.model.param_count == 64 * 64 + 64 + 64 * 10 + 10
    assert plan.procs[0].demand.cpus == 2.0
    assert plan.procs[0].demand.mem_mb >= 128


def test_downpour_edges_connect_every_worker_process_to_every_server_process() -> None:
    plan = load_plan(FRAMEWORKS / "downpour.conf")
    assert plan.nprocs == 6
    pairs = {(e.src, e.dst) for e in plan.edges}
    assert pairs == {(w, s) for w in range(4) for s in (4, 5)}
    # each worker pushes and pulls half of the parameters to each of the two servers
    assert {e.bytes_per_step for e in plan.edges} == {plan.model.param_bytes}


def test_hogwild_edges_are_server_group_syncs_only() -> None:
    plan = load_plan(FRAMEWORKS / "hogwild.conf")
    # workers and their servers share processes; only the groups' syncs cross the network
    sync = round(2 * plan.model.param_bytes / plan.shape.sync_freq)
    assert {(e.src, e.dst): e.bytes_per_step for e in plan.edges} == {(0, 1): sync, (0, 2): sync, (1, 2): sync}


def test_net_demand_is_traffic_at_the_nominal_rate() -> None:
    slow = load_plan(FRAMEWORKS / "downpour.conf", PlanOptions(steps_per_s=1))
    fast = load_plan(FRAMEWORKS / "downpour.conf", PlanOptions(steps_per_s=10))
    server = slow.procs[4].demand.net_mbps
    assert server == pytest.approx(4 * slow.model.param_bytes * 8 / 1e6, rel=1e-3)
    assert fast.procs[4].demand.net_mbps == pytest.approx(10 * server, rel=1e-3)


def test_overrides_replace_estimates() -> None:
    plan = load_plan(FRAMEWORKS / "allreduce.conf", PlanOptions(cpus=0.5, mem_mb=256))
    assert {(p.demand.cpus, p.demand.mem_mb) for p in plan.procs} == {(0.5, 256)}


def test_memory_grows_with_the_model() -> None:
    small = load_plan(REPO / "examples/digits-mlp/job.conf")
    big = load_plan(REPO / "tests/unit/confs/v03-mlp.conf")
    assert big.procs[0].demand.mem_mb > small.procs[0].demand.mem_mb
    assert big.procs[0].demand.mem_mb % 32 == 0


def test_memory_grows_with_the_batch_size() -> None:
    # activations are kept per sample of a worker's batch; 64 -> 64k -> 640k samples of the digits net
    # add ~100 MB and ~1 GB, well past the 32 MB granule the estimate is rounded to
    text = DIGITS.read_text()
    assert text.count("batchsize: 64\n") == 1  # the training input's batch (the test input's is 360)
    batches = (64, 64_000, 640_000)
    plans = [plan_job(parse_job_text(text.replace("batchsize: 64\n", f"batchsize: {b}\n"))) for b in batches]
    assert tuple(p.model.batch_size for p in plans) == batches
    small, medium, big = (p.procs[0].demand.mem_mb for p in plans)
    assert small < medium < big
    assert big - small >= 900


def test_gpu_entries_ask_for_gpus() -> None:
    plan = load_plan(REPO / "tests/unit/confs/v03-convnet.conf")
    assert plan.procs[0].demand.gpus == 1
    assert plan.to_dict()["procs"][0]["gpus"] == 1


def test_graph_carries_demand_and_weights() -> None:
    plan = load_plan(FRAMEWORKS / "sandblaster.conf")
    g = plan.graph()
    assert sorted(g.nodes) == [0, 1, 2, 3, 4]
    assert g.edges[0, 3]["weight"] == plan.model.param_bytes
    assert g.nodes[3]["cpus"] == 1.0


def test_plan_json_is_exactly_one_object_in_the_documented_shape() -> None:
    result = CliRunner().invoke(main, ["plan", "--json", str(FRAMEWORKS / "sandblaster.conf")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert set(data) == {"job", "nprocs", "procs", "edges"}
    assert data["job"] == "digits-sandblaster" and data["nprocs"] == 5
    assert set(data["procs"][0]) == {"id", "workers", "servers", "cpus", "mem_mb", "net_mbps"}
    assert data["procs"][3]["servers"] == [[0, 0]] and data["procs"][3]["workers"] == []
    assert set(data["edges"][0]) == {"src", "dst", "bytes_per_step"}


def test_plan_table_mentions_every_process() -> None:
    result = CliRunner().invoke(main, ["plan", str(FRAMEWORKS / "downpour.conf")])
    assert result.exit_code == 0
    assert "digits-downpour" in result.output and "(1,1)" in result.output


@pytest.mark.parametrize("args, pattern", [
    pytest.param(["examples/invalid/job.conf"], "examples/invalid/job.conf:120:3: nworkers_per_procs (2) must divide",
                 id="invalid-example"),
    pytest.param(["examples/nope.conf"], "examples/nope.conf: no such file", id="missing-file"),
])
def test_cli_errors_exit_2_with_one_line_and_no_traceback(args: list[str], pattern: str) -> None:
    line = _plan_error_line(args)
    assert line.startswith(pattern)


def _plan_error_line(args: list[str]) -> str:
    """Run `scylla-singa plan ARGS` as users do; assert it failed the documented way; its one stderr line."""
    proc = subprocess.run([sys.executable, "-m", "scylla_singa", "plan", *args], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "Traceback" not in proc.stderr
    return proc.stderr.strip()


@pytest.mark.parametrize("old, new, col, message", [
    pytest.param("disp_freq: 50", "disp_freq 50", 11, 'Expected ":"', id="syntax-missing-colon"),
    pytest.param("test_freq: 200", "test_frequency: 200", 1, 'unknown field "test_frequency" in JobProto',
                 id="unknown-field"),
    pytest.param("train_steps: 600", "train_steps: -5", 1, "train_steps must be set to a positive number",
                 id="negative-train-steps"),
    pytest.param("alg: kBP", "alg: kBackprop", 8, 'unknown AlgType value "kBackprop" (one of: kBP,',
                 id="wrong-enum"),
])
def test_cli_errors_in_the_conf_name_file_line_and_column(tmp_path: Path, old: str, new: str, col: int,
                                                           message: str) -> None:
    text = DIGITS.read_text()
    assert text.count(old) == 1
    line_no = text[:text.index(old)].count("\n") + 1  # the line of the broken entry
    conf = tmp_path / "job.conf"
    conf.write_text(text.replace(old, new))
    line = _plan_error_line([str(conf)])
    m = re.fullmatch(rf"{re.escape(str(conf))}:(\d+):(\d+): (.+)", line)
    assert m, f"not FILE:LINE:COL: message: {line!r}"
    assert (int(m.group(1)), int(m.group(2))) == (line_no, col)
    assert message in m.group(3)


def test_a_brace_missing_mid_file_names_the_block_left_open(tmp_path: Path) -> None:
    """The parser then reads the next block as a field of the open one; the message says which is open."""
    lines = DIGITS.read_text().splitlines()
    opened = lines.index("updater {") + 1
    closing = next(k for k in range(opened, len(lines)) if lines[k] == "}")
    conf = tmp_path / "job.conf"
    conf.write_text("\n".join(lines[:closing] + lines[closing + 1:]) + "\n")
    line = _plan_error_line([str(conf)])
    assert line.endswith(f'unknown field "neuralnet" in UpdaterProto: "neuralnet" belongs at the top level, '
                         f'so the "{{" of "updater" on line {opened} is not closed'), line
