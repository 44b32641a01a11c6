"""Read a file a user wrote (a job.conf, a policy YAML) with a size cap, as UTF-8, or refuse it positioned.

Every reader of user-written files comes through `read_user_text`, so a
refusal is always `FILE:LINE:COL: message` and never a traceback: a file
larger than the cap is refused after reading at most cap + 1 bytes (so
/dev/zero or a 10 GB file costs nothing), and bytes that are not UTF-8 are
refused at the line and column of the first bad byte. Stdlib only: the
runtime image reads job.conf through here too.
"""

from __future__ import annotations

from pathlib import Path

from .errors import PositionedError

KIB = 1024
MIB = 1024 * KIB


def read_user_text(path: str | Path, max_bytes: int, error: type[PositionedError], what: str) -> str:
    """The text of `path`, at most `max_bytes` of UTF-8. Raises `error` (FILE:LINE:COL) otherwise.

    `what` names the kind of file in messages ("a SINGA job.conf", "a policy").
    OSError (no such file, a directory, no permission) is the caller's to
    word: only it knows what the user should give instead.
    """
    shown = str(path)
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise error(f"larger than {format_size(max_bytes)}, the most {what} file may hold (the ceiling that "
                    "keeps reading it bounded): is this the right file?", shown, 1, 1)
    return decode_user_bytes(data, shown, error)


def decode_user_bytes(data: bytes, shown: str, error: type[PositionedError]) -> str:
    """`data` as UTF-8 text; a BOM is dropped. Raises `error` at the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = byte_position(data, exc.start)
        raise error(f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded (save the file as "
                    "UTF-8; job.conf and policy files are plain text)", shown, line, col) from None


def byte_position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column) of byte `offset`; the column counts the characters before it on its line."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    before = data[line_start:offset].decode("utf-8", errors="replace")
    return data.count(b"\n", 0, offset) + 1, len(before) + 1


def format_size(n: int) -> str:
    """1048576 -> "1 MiB", 65536 -> "64 KiB", else bytes."""
    if n % MIB == 0:
        return f"{n // MIB} MiB"
    if n % KIB == 0:
        return f"{n // KIB} KiB"
    return f"{n} bytes"
