"""Start scylla-singa's framework on a master and stop it cleanly, again and again (ours or Apache Mesos).

A clean stop (no live jobs) must unregister the framework: pymesos sends the
TEARDOWN from its IO thread on the way out, and that is a daemon thread, so a
process that exits right after stopping the driver could kill it first and
leave the framework registered on the master for its failover timeout (a
week). Each round here is such a process: `python -m
tests.support.framework_shutdown MASTER DIR` subscribes, stops with teardown
and leaves at once (os._exit, threads and all); the master must have let the
framework go every time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typing import Any

import requests

from scylla_singa.framework.credential_source import ENV_PRINCIPAL, ENV_SECRET, find_credential

REPO = Path(__file__).resolve().parents[2]


def registered_frameworks(master: str, credential: Any = None) -> set[str]:
    """Ids of the frameworks the master still has registered (connected or not): /master/state's
    `frameworks` (a torn-down one moves to `completed_frameworks`)."""
    body = requests.get(f"http://{master}/master/state", timeout=10,
                        headers=credential.headers() if credential else None).json()
    return {f["id"] for f in body.get("frameworks", [])}


def start_and_stop_cleanly(master: str, tmp: Path, times: int, credential: Any = None) -> list[str]:
    """`times` framework processes that each subscribe, stop cleanly and exit at once; after each,
    the master must have no such framework registered. Returns their framework ids. `credential` (a
    Credential) reaches each process in its environment, as a user's would."""
    env = dict(os.environ)
    if credential is not None:
        env.update({ENV_PRINCIPAL: credential.principal, ENV_SECRET: credential.secret})
    ids = []
    for i in range(times):
        run = tmp / f"run{i}"
        run.mkdir(parents=True)
        proc = subprocess.run([sys.executable, "-m", "tests.support.framework_shutdown", master, str(run)],
                              cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, f"run {i}: {proc.stderr[-2000:]}"
        fid = proc.stdout.strip()
        assert fid, f"run {i}: no framework id printed; {proc.stderr[-2000:]}"
        assert fid not in registered_frameworks(master, credential), \
            f"run {i}: framework {fid} is still registered after a clean stop and exit"
        ids.append(fid)
    return ids


def _one_round(master: str, run: Path) -> None:
    """Subscribe, check the master has us, stop with teardown, print our id, and leave at once."""
    from scylla_singa.delivery.volume import VolumeDelivery
    from scylla_singa.framework.core import CoreConfig, FrameworkCore
    from scylla_singa.framework.progress_book import ProgressBook
    from scylla_singa.framework.shell import FrameworkShell
    from scylla_singa.framework.store import JobStore

    shell = FrameworkShell(FrameworkCore(CoreConfig()), JobStore(run / "framework.sqlite"),
                           VolumeDelivery(run / "jobs", (run,)), None, ProgressBook())
    credential = find_credential(None)
    shell.start(master, name="shutdown-test", credential=credential)
    if not shell.subscribed.wait(30):
        sys.stderr.write(f"the framework did not subscribe to {master}\n")
        os._exit(1)
    fid = shell.driver.framework_id
    if fid not in registered_frameworks(master, credential):
        sys.stderr.write(f"{fid} subscribed but is not in {master}'s frameworks\n")
        os._exit(1)
    shell.stop(teardown=True)
    sys.stdout.write(fid + "\n")
    sys.stdout.flush()
    os._exit(0)  # as a process ends: daemon threads die with it


if __name__ == "__main__":
    _one_round(sys.argv[1], Path(sys.argv[2]))
