"""Find where a field sits in protobuf text, for error messages.

The protobuf parser reports positions only for syntax errors. Semantic checks
run on the parsed message, so to point at `nworkers_per_procs` on line 12 we
scan the text once and record the position of every field occurrence under a
path such as ``neuralnet.layer[2].innerproduct_conf.num_output``. An
extension written ``[data_conf] { ... }`` is a field named ``[data_conf]``
here, so the extensions the parser skipped can still be found and named.
Sans-I/O: text in, positions out.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

_TOKEN = re.compile(
    r'#[^\n]*'                                   # comment
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''  # string
    r'|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?'  # number
    r'|[A-Za-z_][\w.]*'                          # name
    r'|\S'                                      # punctuation
)
_OPEN = ("{", "<")
_CLOSE = ("}", ">")


@dataclass(frozen=True)
class FieldAt:
    """One field occurrence: its path, whether it opens a message, and where it starts (1-based)."""

    path: str
    opens_message: bool
    line: int
    col: int


def field_occurrences(text: str) -> Iterator[FieldAt]:
    """Every field occurrence of `text` in order.

    Message fields carry their occurrence index under the parent
    (``layer[0]``, ``layer[1]``); scalar fields do not.
    """
    stack: list[str] = []
    counters: list[defaultdict[str, int]] = [defaultdict(int)]
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    tokens = _merge_extension_names(
        [(m.group(), m.start()) for m in _TOKEN.finditer(text) if not m.group().startswith("#")])

    def where(offset: int) -> tuple[int, int]:
        line = bisect_right(line_starts, offset) - 1
        return line + 1, offset - line_starts[line] + 1

    i = 0
    while i < len(tokens):
        tok, off = tokens[i]
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        after = tokens[i + 2][0] if i + 2 < len(tokens) else ""
        if tok in _CLOSE:
            if stack:
                stack.pop()
                counters.pop()
        elif _is_field_name(tok) and (nxt in _OPEN or (nxt == ":" and after in _OPEN)):
            index = counters[-1][tok]
            counters[-1][tok] += 1
            segment = f"{tok}[{index}]"
            yield FieldAt(".".join(stack + [segment]), True, *where(off))
            stack.append(segment)
            counters.append(defaultdict(int))
            i += 2 if nxt != ":" else 3
            continue
        elif _is_field_name(tok) and nxt == ":":
            yield FieldAt(".".join(stack + [tok]), False, *where(off))
            i += 3
            continue
        i += 1


def first_too_deep(text: str, max_depth: int) -> tuple[int, int] | None:
    """(line, col) of the first "{" or "<" that opens a block nested deeper than `max_depth`, else None.

    Iterative and linear, so it can run before the protobuf parser, which
    recurses once per level (and skips an unknown extension's blocks
    recursively too) and would end in RecursionError on a deep enough file.
    """
    depth = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in _OPEN:
            depth += 1
            if depth > max_depth:
                line = text.count("\n", 0, m.start()) + 1
                return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        elif tok in _CLOSE:
            depth = max(0, depth - 1)
    return None


def _merge_extension_names(tokens: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Turn ``[`` name ``]`` into one token ``[name]`` where it names an extension.

    A bracket after ``:`` opens a list value (``include: [kTrain]``) instead.
    """
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(tokens):
        tok, off = tokens[i]
        if (tok == "[" and i + 2 < len(tokens) and _is_name(tokens[i + 1][0]) and tokens[i + 2][0] == "]"
                and (not out or out[-1][0] != ":")):
            out.append((f"[{tokens[i + 1][0]}]", off))
            i += 3
            continue
        out.append((tok, off))
        i += 1
    return out


_SEGMENT = re.compile(r"\[[^\]]*\](?:\[\d+\])?|[^.]+")


def split_path(path: str) -> list[str]:
    """A field path's segments; an extension's dotted name (``[singa.x]``) stays one segment."""
    return _SEGMENT.findall(path)


def field_positions(text: str) -> dict[str, tuple[int, int]]:
    """Map every field path in `text` to its first (line, col), both 1-based."""
    positions: dict[str, tuple[int, int]] = {}
    for occ in field_occurrences(text):
        positions.setdefault(occ.path, (occ.line, occ.col))
    return positions


def _is_name(tok: str) -> bool:
    return bool(tok) and (tok[0].isalpha() or tok[0] == "_")


def _is_field_name(tok: str) -> bool:
    return _is_name(tok) or (tok.startswith("[") and tok.endswith("]") and len(tok) > 2)


def find_field(text: str, path: str) -> tuple[int, int] | None:
    """Position of `path` (e.g. ``cluster.nworkers_per_procs``) in `text`.

    Message segments without an index mean index 0. When the leaf itself is
    absent, the position of the nearest enclosing message is returned, so an
    error about a missing field still points somewhere useful.
    """
    positions = field_positions(text)
    parts = [p if "[" in p else f"{p}[0]" for p in path.split(".")]
    while parts:
        leaf = parts[-1]
        for candidate in (".".join(parts), ".".join(parts[:-1] + [leaf.split("[")[0]])):
            if candidate in positions:
                return positions[candidate]
        parts.pop()
    return None
