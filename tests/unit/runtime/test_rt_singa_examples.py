"""singa-py and SINGA 0.3.0's own example confs: it runs what it implements, on the data `scylla-singa data`
writes in SINGA's formats, and refuses the rest at start by name, pointing to singa:latest."""

from __future__ import annotations

import json
from pathlib import Path

from scylla_singa.jobconf import JobConfError
from scylla_singa.datasets.digits import MNIST_SHAPED, write_digits_set
from scylla_singa.runtime.main import main
from scylla_singa.runtime.spec import load_spec
from tests.unit.singa_source import singa_files

REAL = "run the job on singa:latest (Apache SINGA 0.3 itself) instead"

# What singa-py says about each example conf of SINGA 0.3.0 at start; "runs" means it loads.
AT_START = {
    "examples/alexnet/cudnn.conf": "training on GPUs (gpu) is not supported by singa-py",
    "examples/alexnet/job.conf": 'layer "image": type kImagePreprocess is not supported by singa-py',
    "examples/char-rnn/job.conf": "train_one_batch.alg kBPTT is not supported by singa-py",
    "examples/char-rnn/sample.conf": "train_steps must be set",
    "examples/cifar10/cudnn.conf": "training on GPUs (gpu) is not supported by singa-py",
    "examples/cifar10/cudnn_bm.conf": "training on GPUs (gpu) is not supported by singa-py",
    "examples/cifar10/cudnn_hybrid.conf": "training on GPUs (gpu) is not supported by singa-py",
    "examples/cifar10/hybrid.conf": 'layer "conv1": type kCConvolution is not supported by singa-py',
    "examples/cifar10/job.conf": 'layer "conv1": type kCConvolution is not supported by singa-py',
    "examples/mnist/conv.conf": 'layer "conv1": type kCConvolution is not supported by singa-py',
    "examples/mnist/job.conf": "runs",
    "examples/mnist/rbm_job.conf": 'field "model" is SINGA\'s job format from before v0.1',
    "examples/rbm/autoencoder.conf": "initialising from 4 checkpoint_path files (a pretraining chain) is not supported",
    "examples/rbm/rbm1.conf": "train_one_batch.alg kCD is not supported by singa-py",
    "examples/rbm/rbm2.conf": "train_one_batch.alg kCD is not supported by singa-py",
    "examples/rbm/rbm3.conf": "train_one_batch.alg kCD is not supported by singa-py",
    "examples/rbm/rbm4.conf": "train_one_batch.alg kCD is not supported by singa-py",
    "examples/rnnlm/job.conf": 'layer "data": type kUserLayer (user_type "kData") is not supported by singa-py',
}
NOT_REFUSALS = ("runs", "train_steps must be set", "before v0.1")


def test_singa_example_confs_run_or_are_refused_by_name(tmp_path: Path) -> None:
    confs = singa_files("examples", ".conf")
    assert sorted(confs) == sorted(AT_START)
    wrong = {}
    for name, text in confs.items():
        path = tmp_path / name.replace("/", "_")
        path.write_bytes(text)
        try:
            load_spec(path)
            said = "runs"
        except JobConfError as exc:
            said = str(exc)
            refusal = not any(n in AT_START[name] for n in NOT_REFUSALS)
            if refusal and not (said.endswith(REAL) and exc.line is not None):
                wrong[name] = f"not a positioned refusal pointing to singa:latest: {said}"
        if AT_START[name] not in said and name not in wrong:
            wrong[name] = said
    assert not wrong, wrong


def test_singas_mnist_mlp_conf_trains_on_mnist_shaped_kvfiles(tmp_path: Path, capsys) -> None:
    """SINGA's own conf, only its data paths changed (fewer steps, for time), reading SINGA's KVFile records."""
    write_digits_set(tmp_path / "data", MNIST_SHAPED)
    text = singa_files("examples", ".conf")["examples/mnist/job.conf"].decode()
    for split in ("train", "test"):
        text = text.replace(f"examples/mnist/{split}_data.bin", str(tmp_path / "data" / f"digits-as-mnist-{split}.bin"))
    assert text.count("digits-as-mnist-") == 2 and "train_steps: 1000" in text
    conf = tmp_path / "mlp.conf"
    conf.write_text(text.replace("train_steps: 1000", "train_steps: 120"))
    assert main(["-conf", str(conf), "-workspace", str(tmp_path / "ws")]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out.splitlines()
    tests = [json.loads(line[9:]) for line in out if line.startswith("PROGRESS ") and '"phase": "test"' in line]
    assert [t["step"] for t in tests] == [60, 120]
    assert tests[-1]["accuracy"] >= 0.75 and tests[-1]["accuracy"] > tests[0]["accuracy"]

