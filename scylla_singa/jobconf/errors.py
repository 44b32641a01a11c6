"""Errors that point into a file the user wrote, and the job model's own.

Every problem found while reading or planning a job.conf becomes a
JobConfError carrying the file and, where one exists, the line and column, so
the CLI can print the compiler-style `FILE:LINE:COL: message` users expect.
PositionedError is shared with other user-written files (policy YAML); it
lives here because the runtime image carries only this package.
"""

from __future__ import annotations


class PositionedError(Exception):
    """Something wrong at FILE[:LINE[:COL]]; str() is the compiler-style one-liner."""

    def __init__(self, message: str, path: str | None = None,
                 line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.col = col

    def __str__(self) -> str:
        where = [str(p) for p in (self.path, self.line, self.col) if p is not None]
        return ":".join(where + [" " + self.message]) if where else self.message


class JobConfError(PositionedError):
    """A job.conf that cannot be used: syntax, unknown field, bad value, layout."""
