"""The framework's log records: all in the log file; in the terminal our warnings, one line each."""

from __future__ import annotations

import logging

import pytest

from scylla_singa.framework.log_routing import route_logs


@pytest.fixture
def routed(tmp_path, request):
    routing = route_logs(tmp_path / "framework.log", verbose=request.param)
    yield routing
    routing.remove()


def _failover_chatter() -> None:
    """What pymesos and kazoo log while a leading master dies (their messages, their loggers)."""
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError:
        logging.getLogger("pymesos.process").exception("Failed to recv from ('172.31.240.11', 5050)")
    logging.getLogger("pymesos.process").warning(
        "connect to 172.31.240.11:5050 error: Connection refused, sleep 7s and try again, deadline: tomorrow")
    logging.getLogger("kazoo.client").warning("Connection dropped: socket connection broken")


@pytest.mark.parametrize("routed", [False], indirect=True)
def test_without_v_the_libraries_go_to_the_file_only_and_no_traceback_reaches_the_terminal(routed, capfd) -> None:
    _failover_chatter()
    try:
        raise OSError("disk full")
    except OSError:
        logging.getLogger("scylla_singa.framework").exception("cleaning up job j1")
    logging.getLogger("scylla_singa.framework").info("a decision")
    terminal = capfd.readouterr().err
    assert "pymesos" not in terminal and "kazoo" not in terminal and "Traceback" not in terminal
    assert "a decision" not in terminal
    ours = [line for line in terminal.splitlines() if "cleaning up job j1" in line]
    assert len(ours) == 1 and f"OSError: disk full; details in {routed.log_file}" in ours[0]
    text = routed.log_file.read_text()
    assert text.count("Traceback") == 2 and "ConnectionResetError" in text and "sleep 7s" in text
    assert "Connection dropped" in text and "a decision" in text


@pytest.mark.parametrize("routed", [True], indirect=True)
def test_with_v_the_terminal_also_hears_the_libraries_and_our_decisions(routed, capfd) -> None:
    _failover_chatter()
    logging.getLogger("scylla_singa.framework").info("a decision")
    terminal = capfd.readouterr().err
    assert "sleep 7s" in terminal and "Connection dropped" in terminal and "a decision" in terminal
    assert "Traceback" in terminal  # asked for: the whole story
    assert "a decision" in routed.log_file.read_text()


ROUTED_PROCESS = """
import logging, sys
from pathlib import Path
from scylla_singa.framework.log_routing import route_logs
route_logs(Path(sys.argv[1]), verbose=sys.argv[2] == "-v")
import pymesos  # its import-time stderr handler must not print anything either
logging.getLogger("pymesos.process").warning("connect to 10.0.0.1:5050 error: Connection refused, sleep 7s")
"""


@pytest.mark.parametrize("flag, on_terminal", [("", False), ("-v", True)])
def test_in_a_fresh_process_pymesos_reaches_the_terminal_only_with_v(tmp_path, flag, on_terminal) -> None:
    import subprocess
    import sys
    log_file = tmp_path / "framework.log"
    done = subprocess.run([sys.executable, "-c", ROUTED_PROCESS, str(log_file), flag], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("sleep 7s") == (1 if on_terminal else 0), done.stderr
    assert log_file.read_text().count("sleep 7s") == 1


def test_a_log_file_that_cannot_be_written_is_said_once_and_everything_goes_to_the_terminal(tmp_path, capfd) -> None:
    not_a_file = tmp_path / "framework.log"
    not_a_file.mkdir()  # opening it for writing fails
    routing = route_logs(not_a_file, verbose=False)
    try:
        logging.getLogger("pymesos.process").warning("connect to 10.0.0.1:5050 error: Connection refused")
        terminal = capfd.readouterr().err
        assert f"note: cannot write the framework log {not_a_file}" in terminal and "Traceback" not in terminal
        assert "Connection refused" in terminal  # not lost: with no file, the terminal keeps it
    finally:
        routing.remove()
