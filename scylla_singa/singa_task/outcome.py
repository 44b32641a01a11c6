"""How a SINGA process ended, as the contract's exit code (pure).

Real SINGA aborts (exit 134, SIGABRT) both on a bad configuration and on a
crash; the two are told apart by the FATAL line it logged just before:

- a text-format error in job.conf or singa.conf (libprotobuf names line:col);
- an input it cannot open (KVFile "Cannot create file", CSV "error in reading
  csv file"), a checkpoint file not found, the workspace missing;
- a layer, updater or other type this build does not register (cuDNN/GPU
  layers, LMDB input);
- a `share_from` naming no parameter (SINGA 0.3.0's own RBM examples: its
  net unrolling renames parameters to `0#<name>` but not `share_from`).

Those are exit 2 (bad configuration: no retry helps). A lost peer (seen by
the wrapper through ZooKeeper) is exit 3; anything else non-zero is 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .glog import Fatal

FINISHED, FAILED, BAD_CONF, PEER_LOST = 0, 1, 2, 3

CONF_FATALS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"workspace not exist: (?P<x>.*)"), "the workspace {x} does not exist"),
    (re.compile(r"File not found: (?P<x>.*)"), "checkpoint file {x} not found (checkpoint_path)"),
    (re.compile(r"Cannot (?:create|open) file (?P<x>.*)"), "input file {x} cannot be opened (store_conf.path)"),
    (re.compile(r"error in reading csv file"), "a CSV input file (store_conf.path) cannot be read"),
    (re.compile(r"Can't open (?P<x>.*)"), "input {x} cannot be opened"),
    (re.compile(r"The creation function for (?P<x>\S+) has not been registered"),
     "type id {x} is not available in this CPU build of SINGA 0.3.0 (cuDNN/GPU or LMDB layers are not built)"),
    (re.compile(r"cannot open job conf file (?P<x>.*)"), "job conf {x} cannot be opened"),
    (re.compile(r"can't find share_from = (?P<x>\S+)"),
     "share_from \"{x}\" names no parameter: SINGA 0.3.0 renames every parameter to 0#<name> when it "
     "unrolls the net, but not share_from; write share_from: \"0#{x}\""),
)


@dataclass(frozen=True)
class Outcome:
    code: int
    reason: str


def conf_error(fatal: Fatal, conf_name: str) -> str | None:
    """The bad-configuration sentence for a FATAL line, or None when it is a crash."""
    if fatal.parse_error is not None:
        message_type, line, col, reason = fatal.parse_error
        where = conf_name if message_type == "JobProto" else "singa.conf"
        return f"{where}:{line}:{col}: {reason}"
    for pattern, sentence in CONF_FATALS:
        m = pattern.search(fatal.message)
        if m:
            return f"{conf_name}: " + sentence.format(**{k: v.strip() for k, v in m.groupdict().items()})
    return None


def decide(returncode: int, fatal: Fatal | None, conf_name: str, lost_peers: tuple[int, ...] = ()) -> Outcome:
    """The exit code and a one-line reason for SINGA's `returncode` (negative: killed by that signal)."""
    if lost_peers:
        names = ", ".join(str(p) for p in lost_peers)
        return Outcome(PEER_LOST, f"lost peer process{'es' if len(lost_peers) > 1 else ''} {names}")
    if returncode == 0:
        return Outcome(FINISHED, "finished")
    if fatal is not None:
        sentence = conf_error(fatal, conf_name)
        if sentence is not None:
            return Outcome(BAD_CONF, sentence)
        return Outcome(FAILED, f"SINGA aborted: {fatal.source}: {fatal.message}")
    if returncode < 0:
        return Outcome(FAILED, f"SINGA was killed by signal {-returncode}")
    if returncode > 128:
        return Outcome(FAILED, f"SINGA died with signal {returncode - 128} (exit {returncode})")
    return Outcome(FAILED, f"SINGA exited with {returncode}")
