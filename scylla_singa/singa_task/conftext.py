"""Reads and edits protobuf text format (job.conf) without a schema (sans-I/O).

The task wrapper must change a few fields of the user's job.conf before real
SINGA reads it (the workspace, and on a restart the resume step and
checkpoint files) and read a few others (the cluster shape, the training
batch size). The image has no protobuf runtime for SINGA's job.proto and a
second job model is not wanted, so this module only tokenizes: it finds
fields by name and path, and edits by replacing byte spans.

Edits keep every original line where it was (values are replaced in place,
removed fields become blanks, new fields go at the end), so the line:column
positions SINGA reports for a bad conf point into the user's own file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<word>[A-Za-z0-9_.+\-]+)
  | (?P<punct>[{}<>:\[\],;])
""", re.VERBOSE)


class ConfTextError(ValueError):
    """The text is not protobuf text format; `line` and `col` are 1-based."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(f"{line}:{col}: {message}")
        self.line, self.col, self.reason = line, col, message


@dataclass(frozen=True)
class Field:
    """One field occurrence: `name` at `start`; its value spans [value_start, value_end).

    For a message field the value span is the text between its braces and
    `children` holds its fields; for a scalar (or a `[a, b]` list) it is the
    token(s) and `children` is None. `end` is just past the whole field.
    """

    name: str
    start: int
    end: int
    value_start: int
    value_end: int
    children: tuple[Field, ...] | None = None


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _tokens(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, text, start, end) of every significant token."""
    out = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise ConfTextError(f"unexpected character {text[pos]!r}", *_position(text, pos))
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            out.append((kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return out


class _ConfTextParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def error(self, message: str, offset: int | None = None) -> ConfTextError:
        at = offset if offset is not None else (self.toks[self.i][2] if self.i < len(self.toks) else len(self.text))
        return ConfTextError(message, *_position(self.text, at))

    def peek(self) -> tuple[str, str, int, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str, int, int]:
        tok = self.peek()
        if tok is None:
            raise self.error("unexpected end of file")
        self.i += 1
        return tok

    def fields(self, closer: str | None) -> tuple[Field, ...]:
        out = []
        while True:
            tok = self.peek()
            if tok is None:
                if closer is not None:
                    raise self.error(f"missing '{closer}'")
                return tuple(out)
            if closer is not None and tok[1] == closer:
                return tuple(out)
            if tok[1] in (",", ";"):
                self.take()
                continue
            out.append(self.field())

    def field(self) -> Field:
        kind, name, start, _ = self.take()
        if name == "[":   # an extension: [package.name]
            parts = []
            while (tok := self.take())[1] != "]":
                parts.append(tok[1])
            kind, name = "word", "[" + "".join(parts) + "]"
        if kind != "word":
            raise self.error(f"expected a field name, got {name!r}", start)
        tok = self.peek()
        if tok is not None and tok[1] == ":":
            self.take()
            tok = self.peek()
        if tok is None:
            raise self.error(f"field {name!r} has no value")
        if tok[1] in ("{", "<"):
            closer = "}" if tok[1] == "{" else ">"
            self.take()
            children = self.fields(closer)
            _, _, close_start, close_end = self.take()
            return Field(name, start, close_end, tok[3], close_start, children)
        if tok[1] == "[":
            self.take()
            while True:
                t = self.take()
                if t[1] == "]":
                    return Field(name, start, t[3], tok[2], t[3])
        first = self.take()
        if first[0] not in ("word", "string"):
            raise self.error(f"field {name!r}: unexpected {first[1]!r}", first[2])
        last = first
        while first[0] == "string" and (nxt := self.peek()) is not None and nxt[0] == "string":
            last = self.take()  # adjacent strings concatenate
        return Field(name, start, last[3], first[2], last[3])


def parse(text: str) -> tuple[Field, ...]:
    """The top-level fields of `text`; ConfTextError with line:col when it is not text format."""
    return _ConfTextParser(text).fields(None)


def find(fields: tuple[Field, ...], path: str) -> list[Field]:
    """Every field at dotted `path` (e.g. "cluster.workspace"), in order."""
    head, _, rest = path.partition(".")
    found = [f for f in fields if f.name == head]
    if not rest:
        return found
    return [g for f in found if f.children is not None for g in find(f.children, rest)]


def unquote(token: str) -> str:
    """A string token's value (C escapes undone), or the bare token as is."""
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        inner = token[1:-1]
        if "\\" not in inner:
            return inner
        return inner.encode("latin-1", "backslashreplace").decode("unicode_escape")
    return token


def scalar(text: str, field: Field) -> str:
    """The value of a scalar field, unquoted (adjacent strings joined)."""
    if field.children is not None:
        raise ValueError(f"{field.name} is a message, not a scalar")
    raw = text[field.value_start:field.value_end]
    parts = re.findall(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', raw)
    return "".join(unquote(p) for p in parts) if parts else raw


def quote(value: str) -> str:
    """A text-format string literal for `value`."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def get(text: str, path: str, default: str | None = None) -> str | None:
    """The last value of scalar `path` (protobuf: the last occurrence wins), else `default`."""
    found = find(parse(text), path)
    return scalar(text, found[-1]) if found else default


def get_int(text: str, path: str, default: int) -> int:
    value = get(text, path)
    return default if value is None else int(value, 0)


def blank(text: str, start: int, end: int) -> str:
    """`text` with [start, end) replaced by spaces, newlines kept (so lines do not move)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    new: str


def apply(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping span edits (any order)."""
    out = text
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        out = out[:e.start] + e.new + out[e.end:]
    return out


def set_nested_scalar(text: str, message: str, name: str, literal: str) -> str:
    """Set `message.name` (a top-level message's scalar) to `literal`, keeping lines in place.

    Existing occurrences are replaced (the last) or blanked (the others); a
    message without the field gets it right after its opening brace; no
    such message at all gets one appended at the end.
    """
    top = parse(text)
    messages = [f for f in top if f.name == message and f.children is not None]
    if not messages:
        return text.rstrip("\n") + f"\n{message} {{ {name}: {literal} }}\n"
    occurrences = [c for m in messages for c in m.children or () if c.name == name]
    if occurrences:
        last = occurrences[-1]
        edits = [Edit(last.value_start, last.value_end, literal)]
        edits += [Edit(o.start, o.end, re.sub(r"[^\n]", " ", text[o.start:o.end])) for o in occurrences[:-1]]
        return apply(text, edits)
    m = messages[-1]
    return apply(text, [Edit(m.value_start, m.value_start, f" {name}: {literal} ")])


def replace_top_level(text: str, name: str, literals: list[str]) -> str:
    """Blank every top-level `name` field and append `name: literal` lines at the end."""
    out = text
    for f in sorted((f for f in parse(text) if f.name == name), key=lambda f: f.start, reverse=True):
        out = blank(out, f.start, f.end)
    if literals:
        out = out.rstrip("\n") + "\n" + "".join(f"{name}: {lit}\n" for lit in literals)
    return out
