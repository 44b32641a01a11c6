"""Atomic file writes: readers see the old file or the new one, never half of one.

The data goes to a hidden temporary name in the target's directory (with
the pid and a random token, so concurrent writers, in other processes or
containers sharing the directory, never pick the same one), is flushed and
fsync'ed, gets its mode, and is renamed over the target. On failure the
temporary file is removed and the error raised. Names starting with "."
and holding ".tmp-" are temporaries: whoever lists a directory written this
way skips them.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def temporary_name(name: str) -> str:
    """A hidden name no other writer (in any container, any pid) will pick for `name`."""
    return f".{name}.tmp-{os.getpid()}-{secrets.token_hex(8)}"


def write_atomic(path: str | os.PathLike, data: bytes | Iterable[bytes], *, mode: int | None = None) -> None:
    """Write `data` (bytes, or chunks of them) to `path` atomically; the parent directory is created.

    `mode` (e.g. 0o644) is set before the rename, so the file never appears
    with other permissions. Raises OSError.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(temporary_name(target.name))
    try:
        with open(tmp, "wb") as out:
            for chunk in ([data] if isinstance(data, (bytes, bytearray, memoryview)) else data):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str, *, mode: int | None = None) -> None:
    """`write_atomic` of `text` in UTF-8."""
    write_atomic(path, text.encode("utf-8"), mode=mode)


def write_json_atomic(path: str | os.PathLike, data: Any, *, indent: int | None = None) -> None:
    """`data` as JSON (with a final newline when indented), written atomically."""
    text = json.dumps(data, indent=indent)
    write_text_atomic(path, text + "\n" if indent is not None else text)


def read_json(path: str | os.PathLike, default: Any = None) -> Any:
    """The JSON in `path`, or `default` when it is missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return default
