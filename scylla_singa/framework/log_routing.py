"""Where the framework's log records go: everything to the log file, the few a user needs to the terminal.

pymesos logs every turn of a master failover as an error, with tracebacks
(a closed stream, a refused connection and its retry deadline), while the
driver is doing exactly what it should. In a terminal showing progress bars
that reads as a crash. So pymesos's and kazoo's (its ZooKeeper client's)
records go to the log file only, unless the user asks for them with -v; the
terminal shows our own warnings as one line each, never a traceback (the
log file has it), and the framework says itself what happened to the master
(see subscription_watch.py).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from scylla_singa.common.home import home_path

# Loggers of the libraries that speak to the master and to ZooKeeper for us: the terminal hears them only with -v.
CHATTY_LIBRARIES = ("pymesos", "kazoo")
FILE_FORMAT = "%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s"
TERMINAL_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def framework_log_file() -> Path:
    """$SCYLLA_HOME/framework.log: every framework session of this SCYLLA_HOME appends to it."""
    return home_path() / "framework.log"


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time: the progress display swaps it to print above its bars."""

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


class _OneLine(logging.Formatter):
    """The record's message alone, no traceback; says where the traceback went when there was one."""

    def __init__(self, fmt: str, log_file: Path) -> None:
        super().__init__(fmt)
        self.log_file = log_file

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        if self.usesTime():
            record.asctime = self.formatTime(record)
        line = self.formatMessage(record)
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            line += f" ({type(exc).__name__}: {exc}; details in {self.log_file})"
        return line


class _NotFrom(logging.Filter):
    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__()
        self.names = names

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(record.name == n or record.name.startswith(n + ".") for n in self.names)


@dataclass
class LogRouting:
    """The handlers route_logs installed, to take them off again (tests; a process just exits)."""

    log_file: Path
    handlers: tuple[logging.Handler, ...]
    previous_level: int
    taken_over: dict[str, list[logging.Handler]]

    def remove(self) -> None:
        root = logging.getLogger()
        for h in self.handlers:
            root.removeHandler(h)
            h.close()
        root.setLevel(self.previous_level)
        for name, handlers in self.taken_over.items():
            logging.getLogger(name).handlers = handlers


def route_logs(log_file: Path, verbose: bool) -> LogRouting:
    """Everything at INFO and above (tracebacks included) to `log_file`; to the terminal our warnings
    in one line each, and with `verbose` our INFO records, the libraries' records and tracebacks too."""
    root = logging.getLogger()
    previous = root.level
    root.setLevel(logging.INFO)
    handlers: list[logging.Handler] = []
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(log_file, encoding="utf-8")
        to_file.setLevel(logging.INFO)
        to_file.setFormatter(logging.Formatter(FILE_FORMAT))
        handlers.append(to_file)
    except OSError as exc:  # the command goes on; the user learns why there is no log file
        sys.stderr.write(f"note: cannot write the framework log {log_file} ({exc.strerror or exc}); "
                         "logging to the terminal only\n")
        verbose = True  # nothing would be kept otherwise
    terminal = _CurrentStderr()
    if verbose:
        terminal.setLevel(logging.INFO)
        terminal.setFormatter(logging.Formatter(TERMINAL_FORMAT))
    else:
        terminal.setLevel(logging.WARNING)
        terminal.setFormatter(_OneLine(TERMINAL_FORMAT, log_file))
        terminal.addFilter(_NotFrom(CHATTY_LIBRARIES))
    handlers.append(terminal)
    for h in handlers:
        root.addHandler(h)
    return LogRouting(log_file, tuple(handlers), previous, _take_over(CHATTY_LIBRARIES))


def _take_over(names: tuple[str, ...]) -> dict[str, list[logging.Handler]]:
    """Take the libraries' own handlers off: pymesos adds one writing to stderr when it is imported,
    which would print its failover chatter into the progress display whatever we route."""
    import pymesos  # noqa: F401 - its import adds that handler; import it first so it is there to take off
    taken: dict[str, list[logging.Handler]] = {}
    for name in names:
        lib = logging.getLogger(name)
        taken[name], lib.handlers = list(lib.handlers), []
        lib.propagate = True
    return taken
