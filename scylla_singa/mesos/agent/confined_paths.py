"""Open a host path only when it lies within given roots, with no symlink on the way: no check-then-use window.

A check on a path string (realpath, then `startswith`) and a later use of
the same string are two lookups: whoever can write a directory on the way
may swap a component for a symlink between them (to /etc, to another
job's workspace). Here the path is walked from its root one component at a
time with O_NOFOLLOW (openat), and what is used afterwards is the file
descriptor of the last component, never the string again. Pure of agent
state: the fetcher, the /files endpoints and the volume mounts use it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

# Called with each directory the walk goes through (the root first) and the name looked up in it.
ParentCheck = Callable[[int, str], None]


class PathRefused(PermissionError):
    """The path is outside the roots, or a component of it is a symlink; the message says which."""


def within_roots(path: str, roots: Sequence[Path | str]) -> tuple[str, str] | None:
    """(the root, `path` resolved) when `path` resolved with its symlinks lies within one of `roots`
    (each resolved too); None otherwise."""
    real = os.path.realpath(path)
    for root in roots:
        r = os.path.realpath(root)
        if real == r or real.startswith(r.rstrip("/") + "/"):
            return r, real
    return None


def lexically_within(path: str, roots: Sequence[Path | str]) -> bool:
    """Whether `path` as written (no symlink resolved) is one of `roots` or below one."""
    return any(path == str(r) or path.startswith(str(r).rstrip("/") + "/") for r in roots)


def open_confined(path: str, roots: Sequence[Path | str], *, flags: int = os.O_PATH,
                  check_parent: ParentCheck | None = None) -> int:
    """A file descriptor of `path` opened from its root down without following any symlink, with `flags` for
    the last component (O_PATH: a handle to bind or stat; O_RDONLY: to read). PathRefused when the path does
    not lie within `roots` or names a symlink anywhere; OSError (FileNotFoundError, ...) as the system says.
    `check_parent(dir_fd, name)` may refuse (raise PathRefused) a directory on the way. The caller closes the
    descriptor."""
    found = within_roots(path, roots)
    if found is None:
        raise PathRefused(f"{path} is outside {':'.join(str(r) for r in roots) or '(no roots)'}")
    root, real = found
    parts = [p for p in real[len(root):].split("/") if p]
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            mode = (flags | os.O_NOFOLLOW) if last else (os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW)
            if check_parent is not None:
                check_parent(fd, part)
            try:
                nfd = os.open(part, mode | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):   # swapped for a symlink (or a file) since
                    raise PathRefused(f"{path}: {part} is a symlink (or not a directory)") from None
                raise
            os.close(fd)
            fd = nfd
        if stat.S_ISLNK(os.fstat(fd).st_mode):   # O_PATH|O_NOFOLLOW opens the link itself
            raise PathRefused(f"{path} is a symlink")
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_sandbox_file(path: Path, mode: str) -> BinaryIO:
    """A sandbox's own file (`stdout`, `stderr`), opened by the agent for appending ("ab", created if missing)
    or reading ("rb") without following a symlink in its place: a task owns its sandbox and may put one there,
    and the agent, as root, must not then write or read what it points to. OSError (ELOOP) for a symlink."""
    if mode == "ab":
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        return os.fdopen(fd, "ab", buffering=0)
    if mode == "rb":
        return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb")
    raise ValueError(f"mode {mode!r}: 'ab' or 'rb'")
