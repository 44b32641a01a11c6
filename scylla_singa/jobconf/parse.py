"""Read job.conf (protobuf text format of SINGA's JobProto) into a ParsedJob.

Sans-I/O at the core (`parse_job_text`); `load_job` only adds the file read.
The framework, the CLI and the runtime inside the container all come through
here, so a job.conf is parsed one way only.

It accepts what SINGA 0.3's own parser accepts and refuses the rest:
unknown fields and enum values (naming the SINGA version an old name comes
from, see history.py), and missing `required` fields, which protobuf's
Python parser lets through but SINGA's C++ one does not. Extensions
(``[data_conf] { ... }``, as SINGA's rnnlm example writes) are skipped where
SINGA's message declares an extension range and listed in
`ParsedJob.extensions`: the conf's text travels unchanged to the runtime, so
a real SINGA built with the application's .proto still receives them, and
a runtime that cannot use them refuses them by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from google.protobuf.descriptor import Descriptor

from . import job_pb2
from .errors import JobConfError
from .history import enum_value_history, field_history
from .locate import field_occurrences, find_field, first_too_deep, split_path
from .user_files import KIB, read_user_text

# The most a job.conf may weigh: SINGA 0.3's largest example conf is under 5 KiB, and reading a
# conf dense with fields (protobuf's Python text parser, then locating extensions) takes up to
# 4 s per MiB on a busy 2-core machine, so 128 KiB keeps the worst case near half a second.
MAX_JOB_CONF_BYTES = 128 * KIB
# Blocks inside blocks: SINGA's JobProto nests 5 deep (neuralnet.layer.param.init); protobuf's parser recurses.
MAX_JOB_CONF_DEPTH = 64

_POSITION_PREFIX = re.compile(r"^(\d+):(\d+)\s*:\s*")


@dataclass(frozen=True)
class ExtensionUse:
    """An extension field the conf sets (``[name] ...``), which the job model does not know."""

    name: str
    parent: str  # path of the message it extends, e.g. "neuralnet[0].layer[2]"
    line: int
    col: int

    @property
    def layer_index(self) -> int | None:
        """Index into neuralnet.layer when the extension is set on a layer."""
        m = re.fullmatch(r"neuralnet\[0\]\.layer\[(\d+)\]", self.parent)
        return int(m.group(1)) if m else None


@dataclass(frozen=True)
class ParsedJob:
    """A parsed job.conf together with its source, for positioned errors."""

    proto: job_pb2.JobProto
    path: str
    text: str
    extensions: tuple[ExtensionUse, ...] = ()

    def error(self, message: str, field: str | None = None) -> JobConfError:
        """A JobConfError pointing at `field` (dotted path), or at line 1 column 1 when it is nowhere in the
        text (a missing field, a default): every refusal keeps the FILE:LINE:COL form."""
        pos = find_field(self.text, field) if field else None
        line, col = pos if pos else (1, 1)
        return JobConfError(message, self.path, line, col)


def parse_job_text(text: str, path: str = "job.conf") -> ParsedJob:
    """Parse job.conf text as SINGA 0.3 does. Raises JobConfError (FILE:LINE:COL) on bad syntax, an unknown
    field or value, or a missing required field."""
    too_deep = first_too_deep(text, MAX_JOB_CONF_DEPTH)
    if too_deep:
        raise JobConfError(f"blocks nested more than {MAX_JOB_CONF_DEPTH} deep (SINGA's job.conf needs a few): "
                           'is a "}" missing?', path, *too_deep)
    job = job_pb2.JobProto()
    try:
        text_format.Parse(text, job, allow_unknown_extension=True)
    except text_format.ParseError as exc:
        raw = str(exc)
        line, col = exc.GetLine(), exc.GetColumn()
        message = _friendlier(_POSITION_PREFIX.sub("", raw))
        hint = _unclosed_hint(message, text, line)
        if hint:
            message = message.split(" (check the spelling")[0] + hint
        raise JobConfError(message, path, line, col) from None
    parsed = ParsedJob(job, path, text, _extension_uses(text))
    _check_required(parsed)
    return parsed


def load_job(path: str | Path) -> ParsedJob:
    """Read and parse a job.conf file. Raises JobConfError when missing, unreadable, larger than
    MAX_JOB_CONF_BYTES, not UTF-8 or invalid."""
    try:
        text = read_user_text(path, MAX_JOB_CONF_BYTES, JobConfError, "a SINGA job.conf")
    except FileNotFoundError:
        raise JobConfError("no such file; give the path of a SINGA job.conf", str(path)) from None
    except IsADirectoryError:
        raise JobConfError("is a directory; give the path of a SINGA job.conf file", str(path)) from None
    except OSError as exc:
        raise JobConfError(f"cannot read: {exc}", str(path)) from None
    return parse_job_text(text, str(path))


def _extension_uses(text: str) -> tuple[ExtensionUse, ...]:
    """The extensions set in `text`, outermost only (the parser has refused any where SINGA declares no range)."""
    uses = []
    for occ in field_occurrences(text):
        *parents, leaf = split_path(occ.path)
        if leaf.startswith("[") and not any(p.startswith("[") for p in parents):
            uses.append(ExtensionUse(leaf.split("]")[0][1:], ".".join(parents), occ.line, occ.col))
    return tuple(uses)


def _message_at(segments: list[str]) -> Descriptor | None:
    """The message type at a path of field segments under JobProto (None when it cannot be followed)."""
    message = job_pb2.JobProto.DESCRIPTOR
    for segment in segments:
        field = message.fields_by_name.get(segment.split("[")[0])
        if field is None or field.message_type is None:
            return None
        message = field.message_type
    return message


def _check_required(parsed: ParsedJob) -> None:
    """Refuse a conf that leaves out a field SINGA 0.3 declares `required`, as SINGA's parser does."""
    missing = parsed.proto.FindInitializationErrors()
    if not missing:
        return
    where = missing[0]
    owner, _, field = where.rpartition(".")
    message = _message_at(owner.split(".")) if owner else job_pb2.JobProto.DESCRIPTOR
    type_name = message.name if message is not None else "its message"
    subject = _layer_subject(parsed.proto, owner)
    raise parsed.error(f'{subject}missing "{field}", which SINGA 0.3 requires in {type_name} '
                       f"(add  {field}: ...  to {owner or 'the conf'})", where)


def _layer_subject(job: job_pb2.JobProto, owner: str) -> str:
    """'layer "fc1": ' when `owner` lies inside a named layer, else ''."""
    m = re.match(r"neuralnet\.layer\[(\d+)\]", owner)
    if not m or int(m.group(1)) >= len(job.neuralnet.layer):
        return ""
    name = job.neuralnet.layer[int(m.group(1))].name
    return f'layer "{name}": ' if name else f"layer #{int(m.group(1)) + 1}: "


_TOP_LEVEL_FIELDS = frozenset(f.name for f in job_pb2.JobProto.DESCRIPTOR.fields)


def _unclosed_hint(message: str, text: str, line: int) -> str:
    """When a top-level field shows up inside a block, name the block whose "}" is missing.

    A "}" forgotten in the middle of a file makes the parser read the next
    block as a field of the unclosed one ("unknown field neuralnet in
    UpdaterProto"), which points at the wrong place.
    """
    m = re.match(r'unknown field "(\w+)" in (\w+)', message)
    if not m or m.group(1) not in _TOP_LEVEL_FIELDS or m.group(2) == "JobProto":
        return ""
    stack: list[tuple[str, int]] = []
    for number, raw in enumerate(text.splitlines()[: max(line - 1, 0)], start=1):
        code = re.sub(r'"(?:[^"\\]|\\.)*"|#.*', "", raw)
        for token in re.finditer(r"(\w+)\s*:?\s*\{|\}", code):
            if token.group(0) == "}":
                if stack:
                    stack.pop()
            else:
                stack.append((token.group(1), number))
    if not stack:
        return ""
    name, opened = stack[0]
    return f': "{m.group(1)}" belongs at the top level, so the "{{" of "{name}" on line {opened} is not closed'


def _friendlier(message: str) -> str:
    """Reword the protobuf parser's messages where they confuse SINGA users."""
    m = re.search(r'Message type "singa\.(\w+)" has no field named "?(\w+)"?', message)
    if m and field_history(m.group(1), m.group(2)):
        return field_history(m.group(1), m.group(2))
    if m:
        return f'unknown field "{m.group(2)}" in {m.group(1)} (check the spelling against SINGA 0.3\'s job.proto)'
    m = re.search(r'Enum type "singa\.(\w+)" has no value named "?(\w+)"?', message)
    if m and enum_value_history(m.group(1), m.group(2)):
        return enum_value_history(m.group(1), m.group(2))
    if m:
        names = ", ".join(v.name for v in job_pb2.DESCRIPTOR.enum_types_by_name[m.group(1)].values) \
            if m.group(1) in job_pb2.DESCRIPTOR.enum_types_by_name else ""
        hint = f" (one of: {names})" if names else ""
        return f'unknown {m.group(1)} value "{m.group(2)}"{hint}'
    m = re.search(r'Message type "singa\.(\w+)" does not have extensions', message)
    if m:
        takers = ", ".join(sorted(d.name for d in job_pb2.DESCRIPTOR.message_types_by_name.values()
                                  if d.extension_ranges))
        return f"an extension in {m.group(1)}: SINGA 0.3's {m.group(1)} takes no extensions (these do: {takers})"
    if message.startswith('Expected "}"'):
        return 'expected "}": a "{" above is not closed'
    return message
