"""The runtime reads job.conf through the job model and refuses, by name, what it does not implement."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scylla_singa.jobconf import JobConfError
from scylla_singa.runtime.main import main
from scylla_singa.runtime.spec import Every, load_spec
from .rt_helpers import FRAMEWORKS, NPROCS, example_text, set_field, write_conf

CONFS = Path(__file__).resolve().parents[1] / "confs"


@pytest.mark.parametrize("name", ("digits-mlp",) + FRAMEWORKS)
def test_examples_load(tmp_path: Path, digits_dir: Path, name: str) -> None:
    spec = load_spec(write_conf(tmp_path, name, digits_dir))
    assert spec.nprocs == NPROCS[name]
    assert spec.layout.total == 64 * 64 + 64 + 64 * 10 + 10
    bounds = spec.server_bounds()
    assert len(bounds) == spec.shape.nservers_per_group and bounds[-1][1] == spec.layout.total


def test_singa_v03_mlp_conf_is_supported() -> None:
    spec = load_spec(CONFS / "v03-mlp.conf")
    assert spec.updater.type == "kSGD" and spec.nprocs == 1


@pytest.mark.parametrize("conf,msg", [
    ("v03-convnet.conf", 'layer "conv1": type kCConvolution is not supported by singa-py'),
    ("v03-rbm.conf", "train_one_batch.alg kCD is not supported by singa-py"),
], ids=["convnet", "rbm"])
def test_singa_v03_confs_with_unimplemented_parts_are_refused_by_name(tmp_path: Path, conf: str, msg: str) -> None:
    text = "".join(line for line in (CONFS / conf).read_text().splitlines(True) if not line.startswith("gpu"))
    (tmp_path / conf).write_text(text)  # without its gpu line, which is refused first
    with pytest.raises(JobConfError, match=msg) as info:
        load_spec(tmp_path / conf)
    assert info.value.line is not None
    assert "run the job on singa:latest (Apache SINGA 0.3 itself) instead" in info.value.message


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# Each: a change to the digits MLP, and the refusal singa-py must give at start (pointing to singa:latest).
REFUSED = [
    ("layer-type", lambda t: _replace(t, "type: kSTanh", "type: kLRN"), 'layer "tanh1": type kLRN is not supported'),
    ("user-layer", lambda t: _replace(t, "type: kSTanh", 'type: kUserLayer user_type: "mine"'),
     'layer "tanh1": type kUserLayer \\(user_type "mine"\\) is not supported'),
    ("algorithm", lambda t: _replace(t, "alg: kBP", "alg: kBPTT"), "alg kBPTT is not supported"),
    ("gpu", lambda t: "gpu: 0\n" + t, "training on GPUs \\(gpu\\) is not supported"),
    ("warmup", lambda t: "warmup_steps: 10\n" + t, "warmup_steps 10 is not supported"),
    ("singa-checkpoint", lambda t: 'checkpoint_path: "ws/rbm1/checkpoint/step6000-worker0"\n' + t,
     'checkpoint_path "ws/rbm1/checkpoint/step6000-worker0", an Apache SINGA checkpoint file \\(BlobProtos\\)'),
    ("pretraining-chain", lambda t: 'checkpoint_path: "a"\ncheckpoint_path: "b"\n' + t,
     "initialising from 2 checkpoint_path files \\(a pretraining chain\\) is not supported"),
    ("updater", lambda t: _replace(t, "type: kSGD", "type: kUserUpdater"), "updater type kUserUpdater is not supported"),
    ("learning-rate", lambda t: _replace(t, "type: kStep", "type: kUserChange"),
     "learning_rate type kUserChange is not supported"),
    ("init", lambda t: _replace(t, "type: kConstant", "type: kUserInit"),
     'layer "fc1": param "b1": init type kUserInit is not supported'),
    ("user-param", lambda t: _replace(t, 'name: "b1"', 'name: "b1" type: kUser user_type: "mine"'),
     'layer "fc1": param "b1": type kUser \\(user_type "mine"\\) is not supported'),
    ("backend", lambda t: _replace(t, 'backend: "textfile"', 'backend: "lmdb"'),
     'layer "data": store_conf.backend "lmdb" for kCSVInput is not supported'),
    ("kvfile-csv", lambda t: _replace(t, 'backend: "textfile"', 'backend: "kvfile"'),
     'layer "data": store_conf.backend "kvfile" for kCSVInput is not supported by singa-py \\(it supports "textfile"'),
    ("encoded", lambda t: _replace(t, "std_value: 16\n      random_skip", "encoded: true\n      random_skip"),
     'layer "data": encoded \\(compressed\\) images, store_conf.encoded is not supported'),
    ("batch-per-partition", lambda t: _replace(t, "batchsize: 64", "batchsize: 32\n      batchsize: 32"),
     "one store_conf.batchsize per partition is not supported"),
    ("model-partition", lambda t: _replace(t, "neuralnet {", "neuralnet {\n  partition_dim: 1"),
     "partition_dim 1 \\(splitting layers among a group's workers\\) is not supported"),
    ("unrolled-net", lambda t: _replace(t, "neuralnet {", "neuralnet {\n  unroll_len: 3"),
     "an unrolled recurrent net .* is not supported"),
    ("unrolled-layer", lambda t: _replace(t, "type: kSTanh", "type: kSTanh unroll_len: 2"),
     'layer "tanh1": unrolling .* is not supported'),
    ("softmaxes", lambda t: _replace(t, "type: kSTanh", "type: kSoftmax softmax_conf { num_softmax_per_instance: 2 }"),
     'layer "tanh1": num_softmax_per_instance 2 is not supported'),
    ("extension", lambda t: _replace(t, 'type: kSTanh', 'type: kSTanh [my_conf] { x: 1 }'),
     'layer "tanh1": extension \\[my_conf\\] is not supported by singa-py'),
]

# Mistakes in the conf itself: refused at start too, but they are the conf's, not singa-py's.
MISTAKES = [
    ("no-backend", lambda t: _replace(t, 'backend: "textfile"\n', ""),
     'layer "data": store_conf.backend is not set; SINGA 0.3 needs "textfile" for kCSVInput'),
    ("dropout-ratio", lambda t: _replace(t, 'type: kSTanh', 'type: kDropout dropout_conf { dropout_ratio: 1 }'),
     "dropout_ratio must be in"),
    ("label-source", lambda t: _replace(t, 'srclayers: "fc2"\n    srclayers: "data"', 'srclayers: "fc2"\n    srclayers: "fc1"'),
     'its second srclayer "fc1" must be an input layer'),
    ("missing-src", lambda t: _replace(t, 'srclayers: "fc2"\n    srclayers: "data"', 'srclayers: "fc2"'),
     'layer "loss" \\(kSoftmaxLoss\\) needs 2 srclayers'),
    ("layout", lambda t: _replace(t, "nserver_groups: 1", "nserver_groups: 1\n  nworkers_per_group: 3\n  nworkers_per_procs: 2"),
     "nworkers_per_procs \\(2\\) must divide"),
]


@pytest.mark.parametrize("mutate,msg", [(m, s) for _, m, s in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_unsupported_features_are_refused_at_start_by_name(tmp_path: Path, mutate, msg: str) -> None:
    conf = tmp_path / "job.conf"
    text = mutate(example_text("digits-mlp"))
    conf.write_text(text)
    with pytest.raises(JobConfError, match=msg) as info:
        load_spec(conf)
    assert info.value.message.endswith("; run the job on singa:latest (Apache SINGA 0.3 itself) instead")
    assert info.value.line is not None and info.value.path == str(conf)


@pytest.mark.parametrize("mutate,msg", [(m, s) for _, m, s in MISTAKES], ids=[i for i, _, _ in MISTAKES])
def test_conf_mistakes_are_refused_at_start(tmp_path: Path, mutate, msg: str) -> None:
    conf = tmp_path / "job.conf"
    conf.write_text(mutate(example_text("digits-mlp")))
    with pytest.raises(JobConfError, match=msg) as info:
        load_spec(conf)
    assert "singa:latest" not in info.value.message


def test_singa_exits_2_naming_the_layer_type_and_position(tmp_path: Path, capsys) -> None:
    conf = tmp_path / "job.conf"
    conf.write_text(_replace(example_text("digits-mlp"), "type: kSTanh", "type: kConvolution"))
    assert main(["-conf", str(conf)]) == 2
    err = capsys.readouterr().err
    assert f"{conf}:" in err and 'layer "tanh1": type kConvolution is not supported by singa-py' in err
    assert "singa:latest" in err


@pytest.mark.parametrize("argv,msg", [
    (["-conf"], "expected one argument"),
    ([], "required: -conf"),
    (["-conf", "JOB", "-bogus"], "unrecognized arguments: -bogus"),
    (["-conf", "JOB", "-procs_id", "7"], "-procs_id 7 is out of range: the job has 1 process"),
    (["-conf", "MULTI"], "has 5 processes (cluster section); give -cluster FILE"),
    (["-conf", "MULTI", "-cluster", "nope.json"], "cannot read cluster file nope.json"),
    (["-conf", "/no/such.conf"], "no such file"),
], ids=["no-value", "no-conf", "unknown-flag", "bad-procs-id", "no-cluster-file", "missing-cluster-file", "no-conf-file"])
def test_bad_flags_exit_2(tmp_path: Path, digits_dir: Path, capsys, argv, msg) -> None:
    job = write_conf(tmp_path, "digits-mlp", digits_dir)
    multi = write_conf(tmp_path, "sandblaster", digits_dir, filename="multi.conf")
    argv = [str(job) if a == "JOB" else str(multi) if a == "MULTI" else a for a in argv]
    assert main(argv) == 2
    assert msg in capsys.readouterr().err


def test_every_follows_singas_rule() -> None:
    assert [s for s in range(0, 31) if Every(10, 5).due(s)] == [5, 15, 25]
    assert not any(Every(0, 0).due(s) for s in range(10))


def test_the_runtime_imports_only_what_its_image_carries() -> None:
    """The image carries scylla_singa/{__init__,contracts,common,jobconf,runtime} and numpy, zmq, protobuf only
    (lint-imports checks the same statically; this checks what a real start loads)."""
    code = ("import sys; import scylla_singa.runtime.main, scylla_singa.runtime.transport;"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('click', 'rich', 'docker', 'pymesos', 'networkx', 'sklearn', 'yaml', 'requests', 'aiohttp', 'hdfs')"
            " or (m.startswith('scylla_singa.')"
            "     and m.split('.')[1] not in ('jobconf', 'runtime', 'common', 'contracts')));"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_set_field_helper() -> None:
    assert "train_steps: 7" in set_field(example_text("digits-mlp"), "train_steps", 7)


def test_a_lost_peer_is_given_up_on_after_30_s_unless_told_otherwise(tmp_path: Path, digits_dir: Path,
                                                                      monkeypatch) -> None:
    """The issue's bound: every process exits within 30 s of losing a peer, by default."""
    from scylla_singa.runtime.main import parse_args, prepare

    conf = str(write_conf(tmp_path, "digits-mlp", digits_dir))
    monkeypatch.delenv("SCYLLA_PEER_TIMEOUT", raising=False)
    assert prepare(parse_args(["-conf", conf])).config.peer_timeout_s == 30.0
    monkeypatch.setenv("SCYLLA_PEER_TIMEOUT", "5")
    assert prepare(parse_args(["-conf", conf])).config.peer_timeout_s == 5.0
