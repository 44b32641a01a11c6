"""The one error type of the job model: what is wrong with a job.conf, and where.

Every problem found while reading or planning a job.conf becomes a
JobConfError carrying the file and, where one exists, the line and column, so
the CLI can print the compiler-style `FILE:LINE:COL: message` users expect.
"""

from __future__ import annotations


class JobConfError(Exception):
    """A job.conf that cannot be used: syntax, unknown field, bad value, layout."""

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
