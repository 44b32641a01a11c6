"""One `singa` process end to end: inputs, layers, updaters, display/test/validation schedules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scylla_singa.runtime.main import main
from .rt_helpers import example_text, set_field


def run(tmp_path: Path, text: str, capsys) -> tuple[list[dict], dict]:
    conf = tmp_path / "job.conf"
    conf.write_text(text)
    assert main(["-conf", str(conf), "-workspace", str(tmp_path / "ws")]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    progress = [json.loads(line[9:]) for line in out.splitlines() if line.startswith("PROGRESS ")]
    finals = [json.loads(line[6:]) for line in out.splitlines() if line.startswith("FINAL ")]
    assert len(finals) == 1
    return progress, finals[0]


def digits_conf(digits: Path, **fields) -> str:
    text = example_text("digits-mlp").replace("/data/digits", str(digits))
    for k, v in fields.items():
        text = set_field(text, k, v)
    return text


def test_one_process_reaches_90_percent(tmp_path: Path, digits_dir: Path, capsys) -> None:
    progress, final = run(tmp_path, digits_conf(digits_dir), capsys)
    assert final["steps"] == 600 and final["test_accuracy"] >= 0.9 and final["wall_s"] > 0
    assert [p["step"] for p in progress if p["phase"] == "test"] == [200, 400, 600]


def test_singa_kvfile_records_train_the_digits_mlp_to_90_percent(tmp_path: Path, digits_dir: Path, capsys) -> None:
    """The one data format: SINGA's KVFile of RecordProto, as `scylla-singa data digits` writes it."""
    assert (digits_dir / "train.bin").read_bytes()[:16] == (8).to_bytes(8, "little") + b"00000000"
    text = digits_conf(digits_dir).replace("type: kCSVInput", "type: kRecordInput")
    text = text.replace('backend: "textfile"', 'backend: "kvfile"').replace(".csv", ".bin")
    assert text.count("kRecordInput") == 2 and text.count('backend: "kvfile"') == 2
    _, final = run(tmp_path, text, capsys)
    assert final["steps"] == 600 and final["test_accuracy"] >= 0.9


def test_relu_dropout_adam_and_an_accuracy_layer(tmp_path: Path, digits_dir: Path, capsys) -> None:
    text = digits_conf(digits_dir, train_steps=400, test_freq=0)
    text = text.replace("type: kSTanh", 'type: kReLU')
    text = text.replace('  layer {\n    name: "fc2"', '  layer {\n    name: "drop"\n    type: kDropout\n'
                        '    srclayers: "tanh1"\n    dropout_conf { dropout_ratio: 0.2 }\n  }\n  layer {\n    name: "fc2"')
    text = text.replace('srclayers: "tanh1"\n    innerproduct_conf {\n      num_output: 10',
                        'srclayers: "drop"\n    innerproduct_conf {\n      num_output: 10')
    text = text.replace("type: kSGD\n  momentum: 0.9", "type: kAdam")
    text = text.replace("base_lr: 0.05", "base_lr: 0.005")
    text = text.replace('  layer {\n    name: "loss"', '  layer {\n    name: "probs"\n    type: kSoftmax\n'
                        '    srclayers: "fc2"\n  }\n  layer {\n    name: "acc"\n    type: kAccuracy\n'
                        '    srclayers: "probs"\n    srclayers: "data"\n  }\n  layer {\n    name: "loss"')
    _, final = run(tmp_path, text, capsys)
    assert final["test_accuracy"] >= 0.9


@pytest.mark.parametrize("fields,want", [
    ({"disp_freq": 100, "disp_after": 50, "test_freq": 0}, {"train": [50, 150, 250, 350, 450, 550], "test": [600]}),
    ({"disp_freq": 0, "test_freq": 150, "test_after": 100, "test_steps": 2}, {"train": [], "test": [100, 250, 400, 550, 600]}),
], ids=["display-after", "test-after"])
def test_display_and_test_follow_singas_schedule(tmp_path: Path, digits_dir: Path, capsys, fields, want) -> None:
    progress, _ = run(tmp_path, digits_conf(digits_dir, **fields), capsys)
    for phase, steps in want.items():
        assert [p["step"] for p in progress if p["phase"] == phase] == steps, phase


def test_validation_runs_on_its_own_input_every_validate_freq(tmp_path: Path, digits_dir: Path, capsys) -> None:
    text = digits_conf(digits_dir, validate_freq=100, validate_steps=0, test_freq=0)
    val = (f'  layer {{\n    name: "data"\n    type: kCSVInput\n    store_conf {{\n      path: "{digits_dir}/test.csv"\n'
           '      backend: "textfile"\n      batchsize: 100\n      shape: 64\n      std_value: 16\n    }\n'
           '    include: kVal\n  }\n')
    text = text.replace("neuralnet {\n", "neuralnet {\n" + val, 1)
    progress, final = run(tmp_path, text, capsys)
    validate = [p for p in progress if p["phase"] == "validate"]
    assert [p["step"] for p in validate] == [100, 200, 300, 400, 500]
    assert validate[-1]["accuracy"] >= 0.9 and final["test_accuracy"] >= 0.9
