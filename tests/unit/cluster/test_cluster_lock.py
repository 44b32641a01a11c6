"""One `cluster up`/`down` per prefix at a time: a second process is refused at once, naming the first."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from scylla_singa.cluster import lock

HOLD = """
import sys, time
from scylla_singa.cluster import lock
with lock.exclusive(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_second_process_is_refused_while_the_first_holds_the_prefix() -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, prefix], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(lock.ClusterBusy, match=rf"pid {holder.pid}\) is bringing cluster '{prefix}'"):
            with lock.exclusive(prefix):
                pass
        with lock.exclusive(prefix + "x"):  # another prefix is independent
            pass
    finally:
        holder.communicate("\n", timeout=30)
    with lock.exclusive(prefix):  # released when the holder ended
        with lock.exclusive(prefix):  # re-entrant: `up` runs `down` on an unfinished cluster
            pass
    lock.lock_path(prefix).unlink()
    lock.lock_path(prefix + "x").unlink()
