"""A session's terminal request and the input stream's resize records, read from Mesos's shapes; and a real
pseudo-terminal's size and end of input (no agent: terminal.py alone)."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scylla_singa.mesos.agent.terminal import (Terminal, WindowSize, control_window_size, open_terminal,
                                               task_terminal, terminal_request, window_size)


@pytest.mark.parametrize("container, wanted", [
    (None, False),
    ({}, False),
    ({"type": "MESOS", "tty_info": {}}, None),
    ({"tty_info": {"window_size": {"rows": 24, "columns": 80}}}, WindowSize(24, 80)),
    ({"type": "MESOS", "tty_info": {"window_size": {"rows": 24}}}, None),   # half a size: the default
])
def test_a_container_info_that_asks_only_for_a_terminal_gets_one(container, wanted) -> None:
    assert terminal_request(container) == wanted


@pytest.mark.parametrize("container, wanted", [
    (None, False),
    ({"type": "MESOS"}, False),
    ({"type": "DOCKER", "docker": {"image": "x"}, "tty_info": {}}, False),   # the Docker containerizer ignores it
    ({"type": "MESOS", "tty_info": {}}, None),
    ({"tty_info": {"window_size": {"rows": 24, "columns": 80}}, "volumes": []}, WindowSize(24, 80)),
    ({"type": "MESOS", "mesos": {"image": {"type": "DOCKER", "docker": {"name": "x"}}},
      "tty_info": {"window_size": {"rows": 3, "columns": 4}}}, WindowSize(3, 4)),
])
def test_a_task_runs_on_a_terminal_when_its_mesos_container_asks_for_one(container, wanted) -> None:
    assert task_terminal(container) == wanted


@pytest.mark.parametrize("container", [
    {"type": "DOCKER", "tty_info": {}},
    {"type": "MESOS"},
    {"type": "MESOS", "tty_info": {}, "mesos": {"image": {"type": "DOCKER", "docker": {"name": "x"}}}},
    {"type": "MESOS", "tty_info": {}, "network_infos": [{}]},
])
def test_a_container_info_that_asks_for_more_than_a_terminal_is_refused(container) -> None:
    with pytest.raises(ValueError, match="The provided ContainerInfo is not supported"):
        terminal_request(container)


@given(st.one_of(st.none(), st.integers(), st.text(), st.booleans()),
       st.one_of(st.none(), st.integers(), st.text(), st.booleans()))
def test_a_window_size_is_two_integers_a_terminal_can_hold_or_nothing(rows, columns) -> None:
    size = window_size({"rows": rows, "columns": columns})
    fits = all(type(v) is int and 0 <= v <= 0xFFFF for v in (rows, columns))
    assert size == (WindowSize(rows, columns) if fits else None)


def test_only_a_tty_info_control_record_resizes() -> None:
    resize = {"type": "CONTROL", "control": {"type": "TTY_INFO", "tty_info": {
        "window_size": {"rows": 5, "columns": 6}}}}
    assert control_window_size(resize) == WindowSize(5, 6)
    assert control_window_size({"type": "CONTROL", "control": {"type": "HEARTBEAT", "heartbeat": {}}}) is None
    assert control_window_size({"type": "DATA", "data": {"type": "STDIN", "data": ""}}) is None


def test_a_terminal_has_its_size_takes_input_and_ends_input_with_ctrl_d() -> None:
    async def run() -> bytes:
        controller, command_side = open_terminal(WindowSize(12, 34))
        process = await asyncio.create_subprocess_exec(
            "sh", "-c", "stty size; cat; echo done", stdin=command_side, stdout=command_side, stderr=command_side,
            start_new_session=True)
        os.close(command_side)
        shown = bytearray()
        terminal = Terminal(controller, shown.extend)
        terminal.write(b"typed\r")
        terminal.write(None)
        assert await asyncio.wait_for(process.wait(), 10) == 0
        await asyncio.wait_for(terminal.done.wait(), 10)
        terminal.write(b"after the end")   # nothing: the fd is closed and its number may be another file's
        return bytes(shown)
    lines = asyncio.run(run()).decode().split("\r\n")
    # the terminal echoes what is typed (maybe before `stty size` answers), then `cat` writes it back
    assert "12 34" in lines and lines.count("typed") == 2 and lines[-2:] == ["done", ""], lines


def test_a_terminal_is_closed_by_close_even_while_a_process_holds_it() -> None:
    async def run() -> None:
        controller, command_side = open_terminal(None)
        holder = subprocess.Popen(["sleep", "30"], stdin=command_side, start_new_session=True)
        os.close(command_side)
        try:
            terminal = Terminal(controller, lambda chunk: None)
            terminal.close()
            assert terminal.done.is_set()
            with pytest.raises(OSError):
                os.fstat(controller)
        finally:
            holder.kill()
            holder.wait()
    asyncio.run(run())
