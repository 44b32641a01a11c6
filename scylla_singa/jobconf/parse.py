"""Read job.conf (protobuf text format of SINGA's JobProto) into a ParsedJob.

Sans-I/O at the core (`parse_job_text`); `load_job` only adds the file read.
The framework, the CLI and the runtime inside the container all come through
here, so a job.conf is parsed one way only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format

from . import job_pb2
from .errors import JobConfError
from .locate import find_field

_POSITION_PREFIX = re.compile(r"^(\d+):(\d+)\s*:\s*")


@dataclass(frozen=True)
class ParsedJob:
    """A parsed job.conf together with its source, for positioned errors."""

    proto: job_pb2.JobProto
    path: str
    text: str

    def error(self, message: str, field: str | None = None) -> JobConfError:
        """A JobConfError pointing at `field` (dotted path) when it can be found."""
        pos = find_field(self.text, field) if field else None
        line, col = pos if pos else (None, None)
        return JobConfError(message, self.path, line, col)


def parse_job_text(text: str, path: str = "job.conf") -> ParsedJob:
    """Parse job.conf text. Raises JobConfError with line and column on bad syntax or unknown fields."""
    job = job_pb2.JobProto()
    try:
        text_format.Parse(text, job)
    except text_format.ParseError as exc:
        raw = str(exc)
        line, col = exc.GetLine(), exc.GetColumn()
        message = _friendlier(_POSITION_PREFIX.sub("", raw))
        hint = _unclosed_hint(message, text, line)
        if hint:
            message = message.split(" (check the spelling")[0] + hint
        raise JobConfError(message, path, line, col) from None
    return ParsedJob(job, path, text)


def load_job(path: str | Path) -> ParsedJob:
    """Read and parse a job.conf file. Raises JobConfError when missing, unreadable or invalid."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JobConfError("no such file; give the path of a SINGA job.conf", str(path)) from None
    except IsADirectoryError:
        raise JobConfError("is a directory; give the path of a SINGA job.conf file", str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JobConfError(f"cannot read: {exc}", str(path)) from None
    return parse_job_text(text, str(path))


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
    if m:
        return f'unknown field "{m.group(2)}" in {m.group(1)} (check the spelling against SINGA v0.3\'s job.proto)'
    m = re.search(r'Enum type "singa\.(\w+)" has no value named "?(\w+)"?', message)
    if m:
        names = ", ".join(v.name for v in job_pb2.DESCRIPTOR.enum_types_by_name[m.group(1)].values) \
            if m.group(1) in job_pb2.DESCRIPTOR.enum_types_by_name else ""
        hint = f" (one of: {names})" if names else ""
        return f'unknown {m.group(1)} value "{m.group(2)}"{hint}'
    if message.startswith('Expected "}"'):
        return 'expected "}": a "{" above is not closed'
    return message
