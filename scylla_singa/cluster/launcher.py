"""Masters and agents as processes inside the cluster's namespaces.

`scylla-singa master` and `scylla-singa agent` are run with `nsenter
--net=/var/run/netns/NAME`, so they bind their namespace's address (a node's
agent is reached at the node's address, as on a real host). Options the
command does not (yet) offer are left out: the plan lists them as
"optional", and the command's --help decides.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import requests

from scylla_singa.common.waiting import wait_until
from .netns import netns_path


class LaunchError(RuntimeError):
    """A master or agent did not start or never answered; the message has its log's end."""


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "scylla_singa", *args]


@functools.lru_cache(maxsize=None)
def options_of(command: str) -> frozenset[str] | None:
    """The --options `scylla-singa COMMAND --help` lists, or None when there is no such command."""
    proc = subprocess.run(_cli(command, "--help"), capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return None
    return frozenset(re.findall(r"(--[a-z][a-z0-9-]*)", proc.stdout))


def available(command: str) -> bool:
    return options_of(command) is not None


def argv_for(argv: list[str], optional: dict[str, str | None], supported: frozenset[str]) -> list[str]:
    """`argv` plus each optional `--flag value` the command supports (pure)."""
    out = list(argv)
    for flag, value in optional.items():
        if value is not None and flag in supported:
            out += [flag, value]
    return out


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (tells a pid from a reused one)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
        return None if fields[0] == "Z" else fields[19]
    except (OSError, IndexError):
        return None


def start(name: str, netns: str, argv: list[str], optional: dict[str, str | None], log: str,
          ready_url: str, timeout_s: float = 60, env: dict[str, str] | None = None) -> dict:
    """Start `scylla-singa ARGV` in `netns`, wait until `ready_url` answers 200. Returns {pid, start, argv}."""
    supported = options_of(argv[0])
    if supported is None:
        raise LaunchError(f"`scylla-singa {argv[0]}` does not exist in this installation")
    full = argv_for(argv, optional, supported)
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(["nsenter", f"--net={netns_path(netns)}", *_cli(*full)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
    facts = {"pid": proc.pid, "start": start_time(proc.pid), "argv": full}
    try:
        wait_until(lambda: _answers(ready_url) or proc.poll() is not None, timeout_s, f"{name} at {ready_url}")
    except TimeoutError as exc:
        stop(**facts)
        raise LaunchError(f"{exc}; its log ends:\n{_tail(log)}") from None
    if proc.poll() is not None:
        raise LaunchError(f"{name} exited with {proc.returncode}; its log ends:\n{_tail(log)}")
    return facts


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _tail(path: str, lines: int = 20) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def running(pid: int | None, start: str | None) -> bool:
    return bool(pid) and start is not None and start_time(pid) == start


def stop(pid: int | None = None, start: str | None = None, timeout_s: float = 15, **_: object) -> None:
    """SIGTERM the process (if it is still the one we started), SIGKILL after `timeout_s`; idempotent."""
    if not running(pid, start):
        return
    os.kill(pid, signal.SIGTERM)
    try:
        wait_until(lambda: not running(pid, start), timeout_s, f"process {pid} to exit")
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not running(pid, start), 10, f"process {pid} to die")
