"""Schema-less reading and line-preserving editing of job.conf text."""

from __future__ import annotations

from pathlib import Path

import pytest

from scylla_singa.singa_task import conftext
from scylla_singa.singa_task.checkpoints import ResumePoint
from scylla_singa.singa_task.derived import derive, missing_inputs
from scylla_singa.singa_task.jobshape import read_shape

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
CONF = '''name: "x"  # a comment with { braces
train_steps: 10
checkpoint_path: "a/step5-worker0"
updater { type: kSGD learning_rate < base_lr: 0.1 > }
neuralnet {
  layer { name: "data" store_conf { path: "/d/train.csv" batchsize: 64 shape: [1, 2] } include: kTrain }
  layer { name: "test" store_conf { path: "/d/test.csv" batchsize: 360 } include: kTest }
}
cluster {
  nworker_groups: 2
  workspace: "old"
}
'''


def test_finds_fields_at_paths() -> None:
    fields = conftext.parse(CONF)
    assert [f.name for f in fields] == ["name", "train_steps", "checkpoint_path", "updater", "neuralnet", "cluster"]
    assert conftext.get(CONF, "cluster.workspace") == "old"
    assert conftext.get(CONF, "updater.learning_rate.base_lr") == "0.1"
    assert [conftext.scalar(CONF, f) for f in conftext.find(fields, "neuralnet.layer.store_conf.path")] == \
        ["/d/train.csv", "/d/test.csv"]
    assert conftext.get_int(CONF, "cluster.nworkers_per_group", 1) == 1


@pytest.mark.parametrize("text, where", [
    ('cluster { workspace: "x" ', "1:26"),
    ('name: "unterminated\n', "1:7"),
    ("train_steps: }", "1:14"),
])
def test_errors_say_line_and_column(text: str, where: str) -> None:
    with pytest.raises(conftext.ConfTextError) as info:
        conftext.parse(text)
    assert str(info.value).startswith(where)


def test_setting_the_workspace_keeps_every_line_in_place() -> None:
    out = conftext.set_nested_scalar(CONF, "cluster", "workspace", conftext.quote("/workspace"))
    assert conftext.get(out, "cluster.workspace") == "/workspace"
    assert out.count("\n") == CONF.count("\n")
    assert out.splitlines()[:9] == CONF.splitlines()[:9]


def test_a_workspace_is_added_where_there_was_none() -> None:
    no_ws = CONF.replace('  workspace: "old"\n', "")
    out = conftext.set_nested_scalar(no_ws, "cluster", "workspace", '"/w"')
    assert conftext.get(out, "cluster.workspace") == "/w" and out.count("\n") == no_ws.count("\n")
    no_cluster = 'name: "y"\n'
    assert conftext.get(conftext.set_nested_scalar(no_cluster, "cluster", "workspace", '"/w"'),
                        "cluster.workspace") == "/w"


def test_resume_replaces_step_and_checkpoint_paths_as_singa_does() -> None:
    point = ResumePoint(200, (Path("/w/resume/attempt-2/step200-worker0"), Path("/w/resume/attempt-2/step200-worker1")))
    out = derive(CONF, "/w", point)
    fields = conftext.parse(out)
    assert [conftext.scalar(out, f) for f in conftext.find(fields, "checkpoint_path")] == [str(f) for f in point.files]
    assert conftext.get(out, "step") == "200" and conftext.get(out, "reset_param_version") == "false"
    assert conftext.get(out, "cluster.workspace") == "/w"
    assert out.splitlines()[2].strip() == ""  # the user's checkpoint_path line is blanked, not moved
    assert derive(CONF + "reset_param_version: true\n", "/w", point).count("reset_param_version") == 1


@pytest.mark.parametrize("conf, nprocs, batch", [
    ("digits-mlp/job.conf", 1, 64), ("frameworks/sandblaster.conf", 5, 64), ("frameworks/allreduce.conf", 3, 64),
    ("frameworks/downpour.conf", 6, 64), ("frameworks/hogwild.conf", 3, 64),
])
def test_shapes_of_the_project_examples(conf: str, nprocs: int, batch: int) -> None:
    shape = read_shape((EXAMPLES / conf).read_text())
    assert (shape.nprocs, shape.train_batchsize, shape.train_steps) == (nprocs, batch, 600)


def test_missing_inputs_are_named_with_their_place(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "test.csv").write_text("")
    conf = CONF.replace("/d/", "d/")
    problems = missing_inputs(conf, "job.conf", tmp_path, check_checkpoints=True)
    assert problems == [
        "job.conf:6:37: layer 'data': path 'd/train.csv' does not exist in the container",
        "job.conf:3:1: checkpoint_path 'a/step5-worker0' does not exist (run the job that writes it first, "
        "with the same workspace)"]
    assert len(missing_inputs(conf, "job.conf", tmp_path, check_checkpoints=False)) == 1


def test_extension_fields_as_singas_rnnlm_example_writes_them() -> None:
    text = 'neuralnet { layer { name: "data" user_type: "kData" [data_conf] { path: "/d/train.bin" } } }\n'
    (layer,) = conftext.find(conftext.parse(text), "neuralnet.layer")
    assert [f.name for f in layer.children] == ["name", "user_type", "[data_conf]"]
    assert conftext.get(text, "neuralnet.layer.[data_conf].path") == "/d/train.bin"


@pytest.mark.parametrize("conf", sorted((EXAMPLES / "singa").glob("*/*.conf")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_singas_own_example_confs_read(conf: Path) -> None:
    """SINGA 0.3.0's example confs as committed: one process, a /workspace workspace, inputs in the image's /data."""
    text = conf.read_text()
    shape = read_shape(text)
    assert shape.nprocs == 1 and shape.workspace.startswith("/workspace/")
    paths = [conftext.scalar(text, f) for f in conftext.find(conftext.parse(text), "neuralnet.layer.store_conf.path")]
    paths += [conftext.get(text, "neuralnet.layer.[data_conf].path") or ""]
    assert all(p.startswith("/data/") for p in paths if p)
