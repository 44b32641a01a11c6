"""SINGA's own example confs, and confs from SINGA v0.1/v0.2: accepted where SINGA 0.3 accepts them, else
refused naming the version; required fields and extensions as SINGA 0.3's parser treats them."""

from __future__ import annotations

import pytest

from scylla_singa.jobconf import JobConfError, parse_job_text
from scylla_singa.jobconf.plan import plan_job
from tests.unit.singa_source import singa_files

# What happens to each example conf of SINGA 0.3.0 (checked with SINGA 0.3's own parser, protoc --encode, which
# refuses rbm_job.conf and, without rnnlm's .proto, rnnlm's conf): "plan" means parsed and planned.
SINGA_EXAMPLES = {
    "examples/alexnet/cudnn.conf": "plan",
    "examples/alexnet/job.conf": "plan",
    "examples/char-rnn/job.conf": "plan",
    "examples/char-rnn/sample.conf": "a conf meant for `singa -test`",
    "examples/cifar10/cudnn.conf": "plan",
    "examples/cifar10/cudnn_bm.conf": "plan",
    "examples/cifar10/cudnn_hybrid.conf": "plan",
    "examples/cifar10/hybrid.conf": "plan",
    "examples/cifar10/job.conf": "plan",
    "examples/mnist/conv.conf": "plan",
    "examples/mnist/job.conf": "plan",
    "examples/mnist/rbm_job.conf": 'rbm_job.conf:9:1: field "model" is SINGA\'s job format from before v0.1',
    "examples/rbm/autoencoder.conf": "plan",
    "examples/rbm/rbm1.conf": "plan",
    "examples/rbm/rbm2.conf": "plan",
    "examples/rbm/rbm3.conf": "plan",
    "examples/rbm/rbm4.conf": "plan",
    "examples/rnnlm/job.conf": "plan",
}


def outcome(path: str, text: str) -> str:
    try:
        plan_job(parse_job_text(text, path))
    except JobConfError as exc:
        return str(exc)
    return "plan"


def test_every_singa_example_conf_is_accepted_or_refused_as_singa_does() -> None:
    confs = singa_files("examples", ".conf")
    assert sorted(confs) == sorted(SINGA_EXAMPLES), "SINGA 0.3.0's example confs are not the ones listed here"
    wrong = {}
    for path, text in confs.items():
        got = outcome(path, text.decode())
        if SINGA_EXAMPLES[path] not in got:
            wrong[path] = got
    assert not wrong, wrong


def test_rnnlm_extensions_are_carried_not_refused() -> None:
    """The conf's text is what the framework delivers, so SINGA built with rnnlm.proto still gets them."""
    text = singa_files("examples", ".conf")["examples/rnnlm/job.conf"].decode()
    parsed = parse_job_text(text, "rnnlm.conf")
    assert [(e.name, e.layer_index) for e in parsed.extensions] == [
        ("data_conf", 0), ("data_conf", 1), ("embedding_conf", 2), ("loss_conf", 4)]
    first = parsed.extensions[0]
    assert text.splitlines()[first.line - 1][first.col - 1:].startswith("[data_conf]")
    assert parsed.text == text
    assert [layer.user_type for layer in parsed.proto.neuralnet.layer][:3] == ["kData", "kData", "kEmbedding"]


HEAD = 'name: "old"\ntrain_steps: 10\n'


def net(layers: str) -> str:
    return HEAD + "neuralnet {\n" + layers + "}\n"


DATA = '  layer { name: "data" type: kCSVInput store_conf { backend: "textfile" path: "d.csv" batchsize: 4 shape: 4 } }\n'


@pytest.mark.parametrize("text,name_at,message", [
    pytest.param(HEAD + "model {\n  neuralnet { }\n}\n", "model",
                 'field "model" is SINGA\'s job format from before v0.1', id="v0-model"),
    pytest.param(net(DATA + '  layer { name: "c" type: kConvolution srclayers: "data"\n'
                     "    convolution_conf { num_filters: 2 bias_term: false } }\n"), "bias_term",
                 'field "bias_term" of convolution_conf was SINGA v0.1; SINGA 0.3 has no such field', id="v01-conv-bias"),
    pytest.param(net(DATA + '  layer { name: "l" type: kEuclideanLoss euclideanloss_conf { } }\n'), "euclideanloss_conf",
                 'field "euclideanloss_conf" was SINGA v0.1', id="v01-euclidean-conf"),
    pytest.param(net('  layer { name: "p" type: kPrefetch }\n'), "kPrefetch",
                 "layer type kPrefetch was SINGA v0.1 and v0.2; SINGA 0.3 has no prefetch layer", id="v02-kPrefetch"),
    pytest.param(net('  layer { name: "p" prefetch_conf { } }\n'), "prefetch_conf",
                 'field "prefetch_conf" was SINGA v0.1 and v0.2; SINGA 0.3 has no prefetch layer: give the input '
                 "layer itself (kRecordInput or kCSVInput) a store_conf with  prefetching: true", id="v02-prefetch-conf"),
    pytest.param(net('  layer { name: "i" type: kImagePreprocess rgbimage_preprocess_conf { cropsize: 2 } }\n'),
                 "rgbimage_preprocess_conf", "SINGA 0.3 configures kImagePreprocess with rgbimage_conf", id="invented-preprocess-conf"),
    pytest.param(net('  layer { name: "c" type: kCharRNNInput }\n'), "kCharRNNInput", "SINGA 0.3 calls it kCharRNN",
                 id="invented-kCharRNNInput"),
    pytest.param(net('  layer { name: "r" unroll_conn_type: kUnrollOneToLast }\n'), "kUnrollOneToLast",
                 "SINGA 0.3 calls it kUnrollFirstToLast", id="invented-kUnrollOneToLast"),
    pytest.param(net('  layer { name: "r" unroll_src_conn: 1 }\n'), "unroll_src_conn",
                 'no SINGA version has a field "unroll_src_conn"', id="invented-unroll-src-conn"),
])
def test_names_singa_03_refuses_name_their_version(text: str, name_at: str, message: str) -> None:
    """The message names the version, and FILE:LINE:COL points at the old name."""
    with pytest.raises(JobConfError) as info:
        parse_job_text(text, "old.conf")
    err = info.value
    assert text.splitlines()[err.line - 1][err.col - 1:].startswith(name_at)
    assert message in err.message
    assert str(err).startswith(f"old.conf:{err.line}:{err.col}: ")


def test_a_v01_style_conf_that_singa_03_accepts_is_accepted() -> None:
    """v0.1's shard-data input with its kMnist and kLabel parsers: deprecated in 0.3, still SINGA 0.3's names."""
    text = net('  layer { name: "data" type: kShardData sharddata_conf { path: "train_shard" batchsize: 64 } }\n'
               '  layer { name: "mnist" type: kMnist srclayers: "data" mnist_conf { norm_a: 127.5 norm_b: 1 } }\n'
               '  layer { name: "label" type: kLabel srclayers: "data" }\n'
               '  layer { name: "fc" type: kInnerProduct srclayers: "mnist" innerproduct_conf { num_output: 10 } }\n'
               '  layer { name: "loss" type: kSoftmaxLoss srclayers: "fc" srclayers: "label" }\n') + \
        'updater { type: kSGD learning_rate { type: kFixed base_lr: 0.1 } }\ncluster { workspace: "ws" }\n'
    plan = plan_job(parse_job_text(text))
    assert plan.model.param_count == 28 * 28 * 10 + 10 and plan.model.batch_size == 64


@pytest.mark.parametrize("text,where,message", [
    pytest.param(net('  layer {\n    type: kReLU\n  }\n'), (4, 3),
                 'layer #1: missing "name", which SINGA 0.3 requires in LayerProto', id="layer-name"),
    pytest.param(net(DATA + '  layer { name: "fc" type: kInnerProduct srclayers: "data"\n'
                     "    innerproduct_conf { bias_term: false } }\n"), (6, 5),
                 'layer "fc": missing "num_output", which SINGA 0.3 requires in InnerProductProto', id="num-output"),
    pytest.param(HEAD + "updater {\n  learning_rate {\n    type: kStep\n    step_conf { gamma: 0.5 }\n  }\n}\n", (6, 5),
                 'missing "change_freq", which SINGA 0.3 requires in StepProto (add  change_freq: ...  to '
                 "updater.learning_rate.step_conf)", id="step-change-freq"),
    pytest.param(HEAD + "updater {\n  type: kRMSProp\n  rmsprop_conf { }\n}\n", (5, 3),
                 'missing "rho", which SINGA 0.3 requires in RMSPropProto', id="rmsprop-rho"),
])
def test_required_fields_are_required_as_singa_03s_parser_does(text: str, where: tuple[int, int], message: str) -> None:
    with pytest.raises(JobConfError) as info:
        parse_job_text(text, "r.conf")
    assert (info.value.line, info.value.col) == where
    assert message in info.value.message


def test_extensions_only_where_singa_declares_a_range() -> None:
    ok = parse_job_text(HEAD + 'updater { type: kSGD [my_updater_conf] { x: 1 } }\n'
                        "train_one_batch { alg: kBP [singa.my_alg]: 3 }\n")
    assert [(e.name, e.parent) for e in ok.extensions] == [("my_updater_conf", "updater[0]"),
                                                           ("singa.my_alg", "train_one_batch[0]")]
    with pytest.raises(JobConfError) as info:
        parse_job_text(HEAD + "cluster {\n  [my_cluster_conf] { x: 1 }\n}\n", "e.conf")
    assert (info.value.line, info.value.col) == (4, 4)  # the extension's name
    assert "SINGA 0.3's ClusterProto takes no extensions (these do: AlgProto, JobProto, LRGenProto, LayerProto, " \
        "ParamGenProto, ParamProto, UpdaterProto)" in info.value.message


def test_a_list_value_is_not_taken_for_an_extension() -> None:
    parsed = parse_job_text(net('  layer { name: "a" type: kReLU include: [kTrain, kTest] }\n'))
    assert parsed.extensions == () and list(parsed.proto.neuralnet.layer[0].include) == [1, 4]


GPU_EXAMPLES = ["examples/alexnet/cudnn.conf", "examples/char-rnn/job.conf", "examples/cifar10/cudnn.conf",
                "examples/cifar10/cudnn_bm.conf", "examples/cifar10/cudnn_hybrid.conf"]


@pytest.mark.parametrize("path", GPU_EXAMPLES)
def test_singas_gpu_examples_are_refused_on_a_cluster_without_gpus_at_their_gpu_line(path: str) -> None:
    from scylla_singa.jobconf.gpus import check_gpus

    text = singa_files("examples", ".conf")[path].decode()
    plan = plan_job(parse_job_text(text, path))
    gpu_line = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("gpu"))
    with pytest.raises(JobConfError, match=rf"^{path}:{gpu_line}:1: this is a GPU job: each process needs \d GPUs?"
                                           r" \(`gpu:`\), but the cluster has no agent with GPUs; singa:latest is a CPU"):
        check_gpus(plan, text, path, [0.0, 0.0], "the cluster")
    check_gpus(plan, text, path, [0.0, 8.0], "the cluster")     # an agent with enough GPUs: fine


def test_cpu_examples_need_no_gpus() -> None:
    from scylla_singa.jobconf.gpus import check_gpus

    text = singa_files("examples", ".conf")["examples/cifar10/job.conf"].decode()
    check_gpus(plan_job(parse_job_text(text, "job.conf")), text, "job.conf", [], "this machine")
