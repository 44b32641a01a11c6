"""Run a client on a pseudo-terminal of a given size, as a user at a terminal runs it (`mesos task exec -t`
checks its stdin is a terminal and, with -i, sends that terminal's size), type into it, and read what it shows."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from dataclasses import dataclass


@dataclass
class TerminalRun:
    returncode: int
    shown: bytes   # everything the client wrote to its terminal


def run_on_a_terminal(argv: list[str], env: dict[str, str], rows: int, columns: int, typed: bytes = b"",
                      type_after: bytes = b"", timeout_s: float = 60.0) -> TerminalRun:
    """Run `argv` with a new terminal of `rows` x `columns` as its stdin, stdout and stderr; once the terminal
    shows `type_after` (at once if empty), type `typed`. Returns when the client exits; AssertionError with
    what it showed if it has not exited within `timeout_s`."""
    controller, client_side = pty.openpty()
    fcntl.ioctl(client_side, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    try:
        process = subprocess.Popen(argv, env=env, stdin=client_side, stdout=client_side, stderr=client_side,
                                   start_new_session=True)
    finally:
        os.close(client_side)
    shown = bytearray()
    pending = typed
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            if pending and type_after in shown:
                os.write(controller, pending)
                pending = b""
            left = deadline - time.monotonic()
            if left <= 0:
                process.kill()
                raise AssertionError(f"{argv[0]} did not exit within {timeout_s} s; it showed: {bytes(shown)!r}")
            ready, _, _ = select.select([controller], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:   # EIO: every holder of the client's side closed it
                    chunk = b""
                if not chunk:
                    break
                shown += chunk
        return TerminalRun(process.wait(timeout=max(1.0, deadline - time.monotonic())), bytes(shown))
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.wait()
