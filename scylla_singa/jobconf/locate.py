"""Find where a field sits in protobuf text, for error messages.

The protobuf parser reports positions only for syntax errors. Semantic checks
run on the parsed message, so to point at `nworkers_per_procs` on line 12 we
scan the text once and record the position of every field occurrence under a
path such as ``neuralnet.layer[2].innerproduct_conf.num_output``. Sans-I/O:
text in, positions out.
"""

from __future__ import annotations

import re
from collections import defaultdict

_TOKEN = re.compile(
    r'#[^\n]*'                                   # comment
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''  # string
    r'|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?'  # number
    r'|[A-Za-z_][\w.]*'                          # name
    r'|\S'                                      # punctuation
)


def field_positions(text: str) -> dict[str, tuple[int, int]]:
    """Map every field path in `text` to its first (line, col), both 1-based.

    Message fields carry their occurrence index under the parent
    (``layer[0]``, ``layer[1]``); scalar fields do not.
    """
    positions: dict[str, tuple[int, int]] = {}
    stack: list[str] = []
    counters: list[defaultdict[str, int]] = [defaultdict(int)]
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text) if not m.group().startswith("#")]

    def where(offset: int) -> tuple[int, int]:
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - line_starts[lo] + 1

    i = 0
    while i < len(tokens):
        tok, off = tokens[i]
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        after = tokens[i + 2][0] if i + 2 < len(tokens) else ""
        if tok in ("}", ">"):
            if stack:
                stack.pop()
                counters.pop()
        elif _is_name(tok) and (nxt in ("{", "<") or (nxt == ":" and after in ("{", "<"))):
            index = counters[-1][tok]
            counters[-1][tok] += 1
            path = ".".join(stack + [f"{tok}[{index}]"])
            positions.setdefault(path, where(off))
            stack.append(f"{tok}[{index}]")
            counters.append(defaultdict(int))
            i += 2 if nxt != ":" else 3
            continue
        elif _is_name(tok) and nxt == ":":
            path = ".".join(stack + [tok])
            positions.setdefault(path, where(off))
            i += 3
            continue
        i += 1
    return positions


def _is_name(tok: str) -> bool:
    return bool(tok) and (tok[0].isalpha() or tok[0] == "_")


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
