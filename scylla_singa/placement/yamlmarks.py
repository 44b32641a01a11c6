"""YAML loading that remembers where every value came from, and refuses what a policy never needs.

Policy files are written by users; an error in one must say FILE:LINE:COL.
PyYAML's composer keeps marks on nodes, so we build plain Python data from
the node tree and record each node's position under its path.

Before composing, one pass over the parser's events (iterative, linear in
the text) refuses the YAML that makes loading unbounded or crash: aliases
(`*name`, the billion-laughs bomb expands them exponentially; a policy has
no use for them), nesting deeper than MAX_DEPTH (the composer recurses), and
a mapping or list used as a mapping key (not hashable). A scalar that
cannot be constructed (a date like 2024-13-45, an integer of 5,000 digits)
is refused at its position too. Every refusal is a YamlRefusal with a
1-based line and column.
"""

from __future__ import annotations

from typing import Any

import yaml

Path = tuple[str | int, ...]
# Path suffix under which a mapping key's own position is kept.
KEY = "<key>"
# Deeper than any policy needs (they nest 4 levels); far below the composer's recursion limit.
MAX_DEPTH = 32
# libyaml when PyYAML was built with it: the same grammar, many times faster.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlRefusal(Exception):
    """YAML this loader will not build, at 1-based (line, col)."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def load_with_marks(text: str) -> tuple[Any, dict[Path, tuple[int, int]]]:
    """Parse YAML `text`; returns (data, marks) with 1-based (line, col) per path.

    Raises yaml.YAMLError on bad syntax, YamlRefusal on aliases, deep
    nesting, non-scalar keys or values that cannot be constructed.
    """
    _check_events(text)
    node = yaml.compose(text, Loader=_Loader)
    marks: dict[Path, tuple[int, int]] = {}
    if node is None:
        return None, marks
    return _build(node, (), marks), marks


def _check_events(text: str) -> None:
    """Refuse aliases, nesting past MAX_DEPTH and non-scalar mapping keys, in one pass over the events."""
    # one entry per open collection: [is_mapping, the next node is a key]
    open_collections: list[list[bool]] = []
    for event in yaml.parse(text, Loader=_Loader):
        where = (event.start_mark.line + 1, event.start_mark.column + 1)
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefusal(f"an alias (*{event.anchor}): policy files may not use anchors and aliases "
                              "(they can expand without bound); write the value out", *where)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if open_collections and open_collections[-1] == [True, True]:
                raise YamlRefusal("a mapping key must be a plain value such as a name, not a mapping or a "
                                  "list", *where)
            if len(open_collections) >= MAX_DEPTH:
                raise YamlRefusal(f"nested more than {MAX_DEPTH} levels deep; a policy needs a few", *where)
            open_collections.append([isinstance(event, yaml.MappingStartEvent), True])
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            open_collections.pop()
            _node_done(open_collections)
        elif isinstance(event, yaml.ScalarEvent):
            _node_done(open_collections)


def _node_done(open_collections: list[list[bool]]) -> None:
    """A whole node was read: in a mapping, a key is followed by a value and a value by a key."""
    if open_collections and open_collections[-1][0]:
        open_collections[-1][1] = not open_collections[-1][1]


def _build(node: yaml.Node, path: Path, marks: dict[Path, tuple[int, int]]) -> Any:
    marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            out[key] = _build(value_node, path + (str(key),), marks)
            # errors about the key itself (unknown key) point at the key
            marks[path + (str(key), KEY)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), marks) for i, item in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    """The Python value of a scalar node; YamlRefusal at the node when YAML's rules cannot make one."""
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, OverflowError, TypeError, yaml.YAMLError) as exc:
        raise YamlRefusal(f"cannot read the value {_excerpt(node)}: {exc}", node.start_mark.line + 1,
                          node.start_mark.column + 1) from None
    finally:
        loader.dispose()


def _excerpt(node: yaml.Node) -> str:
    value = str(node.value) if isinstance(node, yaml.ScalarNode) else node.tag
    return repr(value if len(value) <= 40 else value[:40] + "...")


def position(marks: dict[Path, tuple[int, int]], path: Path) -> tuple[int, int]:
    """The position of `path`, or of its nearest recorded ancestor; line 1 column 1 for an empty document."""
    while path not in marks and path:
        path = path[:-1]
    return marks.get(path, (1, 1))
