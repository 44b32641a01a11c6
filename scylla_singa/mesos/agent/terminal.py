"""Terminals for the containers that ask for one: a pseudo-terminal for a command run as a process, its window
size, and what an ATTACH_CONTAINER_INPUT stream's records mean for it.

Mesos gives a nested container session a terminal (`mesos task exec -t`) when its ContainerInfo carries
nothing but `type: MESOS` and `tty_info` (with an optional `window_size`), and a task one when its MESOS
ContainerInfo has `tty_info` (the Mesos containerizer's I/O switchboard; the Docker containerizer ignores
it). The output then is all STDOUT (the terminal merges stderr into it), and an input stream's CONTROL
records of type TTY_INFO resize it. What runs on the Docker engine gets its terminal from the engine
(`docker exec -t`, a container created with a TTY); this module holds the parts all kinds share and the
pty for processes.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import pty
import struct
import termios
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# What an empty STDIN record (the end of input) becomes on a terminal: Ctrl-D, which a reader in canonical
# mode takes as end of file (a terminal cannot be half-closed like a pipe).
END_OF_INPUT = b"\x04"
TERMINAL_DRAIN_S = 5.0   # how long a terminal's last output may take once its command ended


@dataclass(frozen=True)
class WindowSize:
    rows: int
    columns: int


def terminal_request(container: dict[str, Any] | None) -> WindowSize | None | bool:
    """What a nested container's ContainerInfo asks for: False for no terminal (no ContainerInfo), None for a
    terminal of the default size, a WindowSize for one of that size. Raises ValueError for a ContainerInfo
    that asks for more than a terminal (an image, volumes, a network...), which no nested container here
    can have."""
    if not container:
        return False
    if set(container) - {"type", "tty_info"} or container.get("type", "MESOS") != "MESOS" \
            or "tty_info" not in container:
        raise ValueError("The provided ContainerInfo is not supported")
    return window_size((container.get("tty_info") or {}).get("window_size"))


def task_terminal(container: dict[str, Any] | None) -> WindowSize | None | bool:
    """What a task's ContainerInfo asks for, in terminal_request's terms: a MESOS container (with an image or
    without) with `tty_info` runs on a terminal; anything else, a DOCKER one included, does not."""
    if not container or container.get("type", "MESOS") != "MESOS" or "tty_info" not in container:
        return False
    return window_size((container.get("tty_info") or {}).get("window_size"))


def window_size(given: dict[str, Any] | None) -> WindowSize | None:
    """A TTYInfo.WindowSize's rows and columns (each 0..65535); None when absent or out of range."""
    if not isinstance(given, dict):
        return None
    rows, columns = given.get("rows"), given.get("columns")
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 0xFFFF for v in (rows, columns)):
        return None
    return WindowSize(rows, columns)   # type: ignore[arg-type]


def control_window_size(process_io: dict[str, Any]) -> WindowSize | None:
    """The new window size a CONTROL record of an input stream carries (TTY_INFO), else None (HEARTBEAT)."""
    control = process_io.get("control") or {}
    if control.get("type") != "TTY_INFO":
        return None
    return window_size((control.get("tty_info") or {}).get("window_size"))


def set_window_size(fd: int, size: WindowSize) -> None:
    """Resize the terminal `fd` is a side of; its foreground process group gets SIGWINCH."""
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size.rows, size.columns, 0, 0))


def open_terminal(size: WindowSize | None) -> tuple[int, int]:
    """(the controlling side, the command's side) of a new pseudo-terminal, of `size` if given."""
    controller, command_side = pty.openpty()
    if size is not None:
        set_window_size(command_side, size)
    return controller, command_side


def take_terminal() -> None:
    """Run in the child after it started its own session: make its stdin terminal the controlling one, so
    job control, SIGWINCH and /dev/tty work as in a login shell."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """The controlling side of a session's terminal. Reads its output as it comes and hands each chunk to
    `emit`; `done` is set once the command's side is closed by every process (the kernel then answers EIO)
    or `close()` was called, and the fd is closed then (input and resizes after that go nowhere: the fd's
    number may already be another file's), and `closed` is called (what `emit` wrote to is closed)."""

    def __init__(self, controller: int, emit: Callable[[bytes], Any],
                 closed: Callable[[], None] = lambda: None) -> None:
        self.controller = controller
        self.emit = emit
        self.closed = closed
        self.loop = asyncio.get_running_loop()
        self.done = asyncio.Event()
        self.loop.add_reader(controller, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self.controller, 65536)
        except OSError as exc:
            if exc.errno not in (errno.EIO, errno.EBADF):
                raise
            chunk = b""
        if chunk:
            self.emit(chunk)
        else:
            self.close()

    def write(self, data: bytes | None) -> None:
        """Type `data` into the terminal (None: the end of input, as Ctrl-D)."""
        if not self.done.is_set():
            write_input(self.controller, data)

    def resize(self, size: WindowSize) -> None:
        if not self.done.is_set():
            set_window_size(self.controller, size)

    def close(self) -> None:
        if not self.done.is_set():
            self.loop.remove_reader(self.controller)
            os.close(self.controller)
            self.done.set()
            self.closed()


async def drain(terminal: Terminal) -> None:
    """Once its command ended: wait for the terminal's last output (it closes when no process holds its other
    side), at most TERMINAL_DRAIN_S; a process that left the session and still holds it does not keep it."""
    try:
        await asyncio.wait_for(terminal.done.wait(), TERMINAL_DRAIN_S)
    except asyncio.TimeoutError:
        terminal.close()


def write_input(controller: int, data: bytes | None) -> None:
    """Type `data` into the terminal (None: the end of input, as Ctrl-D)."""
    try:
        os.write(controller, END_OF_INPUT if data is None else data)
    except OSError:
        pass   # the command ended and the terminal is closed: its input goes nowhere, as in Mesos
