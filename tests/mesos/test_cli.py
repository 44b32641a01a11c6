"""`scylla-singa master` and `scylla-singa agent --simulate --count N` as processes."""

from __future__ import annotations

import re
import subprocess
import sys

import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import load_credential


def _unless_unreachable(predicate):
    """`predicate`, answering None while the master does not answer yet."""
    def attempt():
        try:
            return predicate()
        except requests.RequestException:
            return None
    return attempt


def test_master_and_a_simulated_fleet_from_the_command_line(tmp_path) -> None:
    cli = [sys.executable, "-m", "scylla_singa"]
    master = subprocess.Popen(cli + ["master", "--host", "127.0.0.1", "--port", "0", "--work-dir",
                                     str(tmp_path / "m"), "--allocation-interval", "200ms"],
                              stderr=subprocess.PIPE, text=True)
    agents = None
    try:
        address = next(m.group(1) for line in master.stderr if (m := re.search(r"listening on (\S+)", line)))
        # secure by default: the master made its credentials in its work dir; the fleet registers with them
        agents = subprocess.Popen(cli + ["agent", "--master", address, "--simulate", "--count", "50",
                                         "--resources", "cpus:2;mem:1024",
                                         "--credential", str(tmp_path / "m" / "agent.credential")],
                                  stderr=subprocess.DEVNULL)
        operator = load_credential(tmp_path / "m" / "framework.credential")
        snapshot = _unless_unreachable(lambda: requests.get(f"http://{address}/metrics/snapshot", timeout=5,
                                                            headers=operator.headers()).json())
        snap = wait_until(lambda: (s := snapshot()) and s["master/slaves_active"] == 50 and s, 20,
                          "50 simulated agents")
        assert snap["master/cpus_total"] == 100
    finally:
        for p in (agents, master):
            if p is not None:
                p.terminate()
                p.wait(timeout=20)
    assert master.returncode == 0


def test_help_texts_and_bad_flags() -> None:
    from click.testing import CliRunner

    from scylla_singa.cli import main
    runner = CliRunner()
    out = runner.invoke(main, ["agent", "--help"]).output
    assert "--simulate" in out and "--resources" in out
    bad = runner.invoke(main, ["master", "--allocation-interval", "soon"])
    assert bad.exit_code == 2 and "bad duration" in bad.output
    bad = runner.invoke(main, ["agent", "--master", "x:1", "--resources", "cpus:lots"])
    assert bad.exit_code == 2 and "cpus" in bad.output
