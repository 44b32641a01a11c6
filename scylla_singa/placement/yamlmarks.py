"""YAML loading that remembers where every value came from.

Policy files are written by users; an error in one must say FILE:LINE:COL.
PyYAML's composer keeps marks on nodes, so we build plain Python data from
the node tree and record each node's position under its path.
"""

from __future__ import annotations

from typing import Any

import yaml

Path = tuple[str | int, ...]
# Path suffix under which a mapping key's own position is kept.
KEY = "<key>"


def load_with_marks(text: str) -> tuple[Any, dict[Path, tuple[int, int]]]:
    """Parse YAML `text`; returns (data, marks) with 1-based (line, col) per path. Raises yaml.YAMLError."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    marks: dict[Path, tuple[int, int]] = {}
    if node is None:
        return None, marks
    return _build(node, (), marks), marks


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
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def position(marks: dict[Path, tuple[int, int]], path: Path) -> tuple[int | None, int | None]:
    """The position of `path`, or of its nearest recorded ancestor."""
    while path not in marks and path:
        path = path[:-1]
    return marks.get(path, (None, None))
