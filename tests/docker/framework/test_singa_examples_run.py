"""Apache SINGA 0.3.0's own example confs (examples/singa/) through `scylla-singa run --image singa:latest`.

The CI subset of bench/singa_examples.py (which runs them all, at full length, for examples/singa/README.md):
the MNIST MLP, and the RBM chain's first link (rbm2 starting from rbm1's checkpoint through a shared
workspace, as SINGA's examples directory chains them), each with fewer steps so that the pair costs
about a minute here. The metrics are read from `logs` the way the bench reads them.
"""

from __future__ import annotations

import re

import docker

from bench.singa_examples import EXAMPLES_DIR, metric_curve, progress_lines
from scylla_singa.mesos.embedded import AgentSpec, EmbeddedMesos
from tests.support.job_confs import REAL_SINGA_IMAGE, conf_with
from tests.support.scylla_cli import ScyllaCli, last_json


def run_example(cli: ScyllaCli, master: str, text: str, name: str, *options: str) -> tuple[dict, str, str]:
    """Run conf `text` as a job; its `run --json` result, and its stdout and stderr logs."""
    conf = cli.tmp / f"{name}.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(text)
    r = cli.run("run", "--json", "--image", REAL_SINGA_IMAGE, "--master", master, *options, str(conf))
    assert r.returncode == 0, r.stderr[-3000:]
    out = last_json(r.stdout)
    assert out["state"] == "FINISHED" and out["restarts"] == 0, out
    stdout = cli.run("logs", out["job"]).stdout
    stderr = cli.run("logs", "--stderr", out["job"]).stdout
    return out, stdout, stderr


def test_singas_mnist_mlp_and_rbm_chain_examples_train_through_the_framework(
        scylla: ScyllaCli, docker_client: docker.DockerClient) -> None:
    shared = scylla.home / "jobs" / "singa-examples"
    with EmbeddedMesos([AgentSpec(resources="cpus:2;mem:2048")], docker_client=docker_client,
                       allowed_host_paths=[scylla.home / "jobs"]) as mesos:
        master = mesos.master_address
        scylla.authenticate_with(mesos.framework_credential)   # a secure master, as every one is by default
        # The MNIST MLP (SINGA's 6-layer, 10 M-parameter net) learns within 240 steps.
        mlp = conf_with((EXAMPLES_DIR / "mnist-mlp" / "job.conf").read_text(), train_steps=250)
        out, stdout, _ = run_example(scylla, master, mlp, "mnist-mlp")
        accuracy = metric_curve(progress_lines(stdout), "test", "accuracy")
        assert [s for s, _ in accuracy] == [0, 60, 120, 180, 240], accuracy
        assert accuracy[0][1] < 0.3 and accuracy[-1][1] >= 0.85, accuracy
        assert out["test_accuracy"] == accuracy[-1][1], out
        scylla.assert_nothing_left(out["job"])

        # rbm1, then rbm2 from rbm1's last checkpoint, both in one workspace shared by the two jobs.
        rbm1 = conf_with((EXAMPLES_DIR / "rbm" / "rbm1.conf").read_text(), train_steps=500, test_freq=250)
        out1, stdout1, _ = run_example(scylla, master, rbm1, "rbm1", "--workspace", str(shared))
        error1 = metric_curve(progress_lines(stdout1), "test", "squared_error")
        assert [s for s, _ in error1] == [0, 250], error1
        assert error1[-1][1] < error1[0][1] / 5, error1                # the reconstruction error falls
        assert (shared / "rbm1" / "checkpoint" / "step500-worker0").is_file()
        rbm2_text = (EXAMPLES_DIR / "rbm" / "rbm2.conf").read_text().replace("step6000-worker0", "step500-worker0")
        rbm2 = conf_with(rbm2_text, train_steps=300, test_freq=250)
        out2, stdout2, stderr2 = run_example(scylla, master, rbm2, "rbm2", "--workspace", str(shared))
        assert re.search(r"Load from checkpoint file /workspace/rbm1/checkpoint/step500-worker0", stderr2), \
            stderr2[-3000:]
        error2 = metric_curve(progress_lines(stdout2), "test", "squared_error")
        assert [s for s, _ in error2] == [0, 250] and error2[-1][1] < error2[0][1], error2
    for job in (out1["job"], out2["job"]):
        scylla.assert_nothing_left(job)
