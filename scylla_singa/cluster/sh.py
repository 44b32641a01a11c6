"""Running host commands: the one place the cluster code shells out."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence


class CommandError(RuntimeError):
    """A command failed; the message holds the command and its stderr."""


def run(argv: Sequence[str], check: bool = True, timeout: float = 120, input: str | None = None) -> str:
    """Run `argv`, return its stdout. CommandError (with stderr) when it fails and `check`."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, input=input)
    except FileNotFoundError:
        raise CommandError(f"{argv[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise CommandError(f"{' '.join(argv)}: no answer within {timeout:.0f}s") from None
    if check and proc.returncode != 0:
        raise CommandError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()[-800:]}")
    return proc.stdout


def ok(argv: Sequence[str], timeout: float = 60) -> bool:
    """True when `argv` exits 0 (its output is discarded)."""
    try:
        return subprocess.run(list(argv), capture_output=True, timeout=timeout).returncode == 0
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
