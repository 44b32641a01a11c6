"""Parsing job.conf: real SINGA-style files parse; bad ones give FILE:LINE:COL errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.jobconf import JobConfError, job_pb2, load_job, parse_job_text
from scylla_singa.jobconf.plan import plan_job
from scylla_singa.jobconf.validate import validate_job

HERE = Path(__file__).parent
REPO = HERE.parent.parent
EXAMPLE_CONFS = sorted((REPO / "examples").glob("digits-mlp/job.conf")) + sorted((REPO / "examples/frameworks").glob("*.conf"))
SINGA_STYLE = sorted((HERE / "confs").glob("v03-*.conf"))

MINIMAL = 'name: "x"\ntrain_steps: 10\nneuralnet {\n  layer { name: "a" type: kReLU }\n}\n'


@pytest.mark.parametrize("path", EXAMPLE_CONFS + SINGA_STYLE, ids=lambda p: p.name)
def test_confs_parse_and_validate(path: Path) -> None:
    parsed = load_job(path)
    validate_job(parsed)
    assert parsed.proto.name
    assert parsed.proto.neuralnet.layer


ALL_EXAMPLES = sorted((REPO / "examples").rglob("*.conf"))


@pytest.mark.parametrize("path", ALL_EXAMPLES, ids=lambda p: str(p.relative_to(REPO / "examples")))
def test_every_example_conf_parses_and_all_but_the_invalid_one_plan(path: Path) -> None:
    parsed = load_job(path)
    if path.parent.name == "invalid":
        with pytest.raises(JobConfError, match="must divide"):
            plan_job(parsed)
    else:
        assert plan_job(parsed).nprocs >= 1


def test_singa_v03_fields_survive_parsing() -> None:
    conv = load_job(HERE / "confs/v03-convnet.conf").proto
    assert list(conv.updater.learning_rate.fixedstep_conf.step) == [0, 60000, 65000]
    assert conv.updater.learning_rate.type == job_pb2.kFixedStep
    pool2 = [layer for layer in conv.neuralnet.layer if layer.name == "pool2"][0]
    assert pool2.pooling_conf.pool == job_pb2.PoolingProto.AVG
    assert list(conv.gpu) == [0]
    rbm = load_job(HERE / "confs/v03-rbm.conf").proto
    assert rbm.train_one_batch.alg == job_pb2.kCD and rbm.train_one_batch.cd_conf.cd_k == 1
    assert rbm.neuralnet.layer[2].param[0].share_from == "w1"


def test_cluster_defaults_are_singas() -> None:
    job = parse_job_text(MINIMAL).proto
    c = job.cluster
    assert (c.nworker_groups, c.nserver_groups, c.nworkers_per_group, c.nservers_per_group,
            c.nworkers_per_procs, c.nservers_per_procs) == (1, 1, 1, 1, 1, 1)
    assert (c.server_worker_separate, c.sync_freq, c.start_port, c.share_memory, c.poll_time) == \
        (False, 1, 6723, True, 100)


@pytest.mark.parametrize("text, line, col, fragment", [
    pytest.param('name: "x"\nneuralnet {\n  layer { name: "a" typo: 3 }\n}\n', 3, 21, 'unknown field "typo" in LayerProto',
                 id="unknown-field"),
    pytest.param('name: "x"\nneuralnet {\n  layer { name: "a" type: kNope }\n}\n', 3, 27, 'unknown LayerType value "kNope"',
                 id="unknown-enum"),
    pytest.param('name: "x"\ntrain_steps: ten\n', 2, 14, "", id="bad-integer"),
    pytest.param('name: "x"\nneuralnet {\n  layer { name: "a"\n}\n', 4, 1, 'expected "}"', id="unclosed-brace"),
])
def test_syntax_errors_carry_position(text: str, line: int, col: int, fragment: str) -> None:
    with pytest.raises(JobConfError) as info:
        parse_job_text(text, "job.conf")
    err = info.value
    assert (err.path, err.line, err.col) == ("job.conf", line, col)
    assert fragment in err.message
    assert str(err).startswith(f"job.conf:{line}:{col}: ")


@pytest.mark.parametrize("text, fragment, line", [
    pytest.param('train_steps: 5\nneuralnet { layer { name: "a" type: kReLU } }\n', 'missing "name"', None, id="no-name"),
    pytest.param('name: "x"\nneuralnet { layer { name: "a" type: kReLU } }\n', "train_steps", None, id="no-steps"),
    pytest.param('name: "x"\ntrain_steps: 5\n', "no layers", None, id="no-layers"),
    pytest.param('name: "x"\ntrain_steps: 5\nneuralnet {\n layer { name: "a" type: kReLU srclayers: "zz" }\n}\n',
                 'unknown layer "zz"', 4, id="dangling-src"),
    pytest.param('name: "x"\ntrain_steps: 5\nneuralnet { layer { name: "a" type: kReLU } }\n'
                 'cluster {\n  nworker_groups: 2\n  nserver_groups: 3\n}\n', "nserver_groups (3) must divide", 6,
                 id="server-groups-not-dividing"),
    pytest.param('name: "x"\ntrain_steps: 5\nneuralnet { layer { name: "a" type: kReLU } }\n'
                 'cluster {\n  nworkers_per_group: 0\n}\n', "nworkers_per_group must be at least 1", 5, id="zero-workers"),
])
def test_semantic_errors(text: str, fragment: str, line: int | None) -> None:
    parsed = parse_job_text(text, "j.conf")
    with pytest.raises(JobConfError) as info:
        plan_job(parsed)
    assert fragment in info.value.message
    if line is not None:
        assert info.value.line == line


def test_invalid_example_points_at_the_culprit() -> None:
    path = REPO / "examples/invalid/job.conf"
    with pytest.raises(JobConfError) as info:
        plan_job(load_job(path))
    err = info.value
    lines = path.read_text().splitlines()
    assert "nworkers_per_procs (2) must divide" in err.message
    assert lines[err.line - 1][err.col - 1:].startswith("nworkers_per_procs")


@pytest.mark.parametrize("make_path, fragment", [
    pytest.param(lambda tmp: tmp / "missing.conf", "no such file", id="missing"),
    pytest.param(lambda tmp: tmp, "is a directory", id="directory"),
])
def test_unreadable_files(tmp_path: Path, make_path, fragment: str) -> None:
    with pytest.raises(JobConfError) as info:
        load_job(make_path(tmp_path))
    assert fragment in str(info.value)
