"""The job.conf real SINGA is given: the user's, with the workspace and the resume point set.

SINGA 0.3.0 has no -workspace flag (it ignores unknown flags) and writes
checkpoints to `cluster.workspace` of job.conf, so the framework's
workspace is written there. A resume sets `step`, `checkpoint_path` and
`reset_param_version` as SINGA's own -resume does (Driver::SetupForResume),
but with the step checkpoints.py chose. Lines stay where they were
(conftext), so SINGA's line:column errors point into the user's file.

`missing_inputs` names, with line:column, every local input file the conf
reads that does not exist (SINGA would abort on it later, some only at the
first test, with a message that does not say which file).
"""

from __future__ import annotations

from pathlib import Path

from . import conftext
from .checkpoints import ResumePoint

INPUT_FILE_FIELDS = ("store_conf.path", "store_conf.mean_file", "store_conf.std_file", "char_rnn_conf.path",
                     "char_rnn_conf.vocab_path")


def _where(text: str, field: conftext.Field) -> str:
    line = text.count("\n", 0, field.start) + 1
    col = field.start - (text.rfind("\n", 0, field.start) + 1) + 1
    return f"{line}:{col}"


def _is_local(path: str) -> bool:
    return "://" not in path


def missing_inputs(text: str, conf_name: str, cwd: Path, check_checkpoints: bool) -> list[str]:
    """One sentence per input file (and checkpoint_path, when asked) that is not there."""
    fields = conftext.parse(text)
    problems = []
    for layer in conftext.find(fields, "neuralnet.layer"):
        children = layer.children or ()
        names = conftext.find(children, "name")
        layer_name = conftext.scalar(text, names[0]) if names else "?"
        for path_field in INPUT_FILE_FIELDS:
            for f in conftext.find(children, path_field):
                value = conftext.scalar(text, f)
                if _is_local(value) and not (cwd / value).exists():
                    problems.append(f"{conf_name}:{_where(text, f)}: layer {layer_name!r}: "
                                    f"{path_field.split('.')[-1]} {value!r} does not exist in the container")
    if check_checkpoints:
        for f in conftext.find(fields, "checkpoint_path"):
            value = conftext.scalar(text, f)
            if _is_local(value) and not (cwd / value).exists():
                problems.append(f"{conf_name}:{_where(text, f)}: checkpoint_path {value!r} does not exist "
                                f"(run the job that writes it first, with the same workspace)")
    return problems


def derive(text: str, workspace: str, resume: ResumePoint | None) -> str:
    """The conf for SINGA: `cluster.workspace` = `workspace`, and the resume point if any."""
    out = conftext.set_nested_scalar(text, "cluster", "workspace", conftext.quote(workspace))
    if resume is None:
        return out
    out = conftext.replace_top_level(out, "step", [str(resume.step)])
    out = conftext.replace_top_level(out, "checkpoint_path", [conftext.quote(str(f)) for f in resume.files])
    if not conftext.find(conftext.parse(out), "reset_param_version"):
        out = out.rstrip("\n") + "\nreset_param_version: false\n"
    return out
