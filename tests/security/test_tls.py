"""TLS: a master serving HTTPS, and an agent whose link to it is wss and verifies its certificate (issue 14 item 7)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import load_credential

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "scylla_singa"]


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "master.pem", tmp / "master.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(CLI + argv, cwd=REPO, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def test_a_tls_master_serves_https_only_and_an_agent_registers_over_wss(tmp_path) -> None:
    """Attack: read credentials off the wire. With --tls-cert the master answers HTTPS only (a plain HTTP
    request gets no answer), and an agent given the CA registers over wss with its credential."""
    cert, key = _self_signed(tmp_path)
    env = {**os.environ, "SCYLLA_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1"}
    procs = []
    try:
        bad = subprocess.run(CLI + ["master", "--port", "0", "--tls-cert", str(cert)], env=env, capture_output=True,
                             text=True, timeout=60)
        assert bad.returncode == 2 and "--tls-cert and --tls-key go together" in bad.stderr
        swapped = subprocess.run(CLI + ["master", "--port", "0", "--tls-cert", str(key), "--tls-key", str(cert)],
                                 env=env, capture_output=True, text=True, timeout=60)
        assert swapped.returncode == 1 and "not a PEM certificate and its matching private key" in swapped.stderr
        assert "Traceback" not in swapped.stderr

        log = tmp_path / "master.log"
        procs.append(_start(["master", "--host", "127.0.0.1", "--port", "0", "--tls-cert", str(cert),
                             "--tls-key", str(key)], env, log))
        found = wait_until(lambda: re.search(r"listening on https://(\S+)", log.read_text()), 60, "the TLS master")
        address = found.group(1)
        operator = load_credential(tmp_path / "home" / "master" / "framework.credential")
        assert requests.get(f"https://{address}/health", verify=str(cert), timeout=10).status_code == 200
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://{address}/health", timeout=10)
        with pytest.raises(requests.exceptions.SSLError):   # an unverified certificate is refused by clients
            requests.get(f"https://{address}/health", timeout=10)
        agent_log = tmp_path / "agent.log"
        procs.append(_start(["agent", "--master", f"https://{address}", "--tls-ca", str(cert), "--simulate",
                             "--host", "127.0.0.1", "--port", "0"], env, agent_log))

        def agents() -> list:
            state = requests.get(f"https://{address}/master/state", verify=str(cert), timeout=10,
                                 headers=operator.headers()).json()
            return state["slaves"]
        [agent] = wait_until(agents, 60, "the agent to register over wss")
        assert agent["active"]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(20)
