"""How the processes of one job attempt meet in ZooKeeper (pure rules; zk.py does the I/O).

Real SINGA numbers its processes by registration order (ZKClusterRT::
RegistProc, src/utils/zk_service.cc): each creates an ephemeral sequential
`/singa/app/job-<%010d id>/proc-lock/lock-`, lists the locks, and its
index in the sorted list is its process id; it then publishes its endpoint
as `/singa/app/job-<id>/proc/proc-<id>` ("ip:port|pid"). The id decides
which workers and servers the process hosts, so it must be the framework's
proc id (the placement was chosen for it). The wrapper of process K starts
SINGA only once `proc-0` .. `proc-(K-1)` all exist: then exactly K locks
precede its own, and K's lock precedes every later process's. SINGA's own
log line `proc #K -> ...` is checked against K.

The SINGA job id (the number under /singa/app) comes from `singatool
create`, which process 0's wrapper runs once per attempt. Process 0 then
publishes it under the attempt's node (the framework gives every task of an
attempt the same attempt number A, and a new one to every restart):

    /scylla/jobs/<job>/attempt-<A>          persistent
        info      ephemeral (process 0's session), JSON {"singa_job", "resume_step", "resume_files"}
        live-<K>  ephemeral, while process K's wrapper runs
        done-<K>  persistent, once process K's SINGA exited 0 (created before live-K goes)

The others wait for `info`. A `live-<K>` that vanishes with no `done-<K>`
is a lost peer. Process 0 removes the nodes of earlier attempts; the
framework removes /scylla/jobs/<job> when the job ends.
"""

from __future__ import annotations

SINGA_APP = "/singa/app"
SCYLLA_JOBS = "/scylla/jobs"


def singa_job_path(singa_job: int) -> str:
    return f"{SINGA_APP}/job-{singa_job:010d}"


def proc_path(singa_job: int, proc: int) -> str:
    return f"{singa_job_path(singa_job)}/proc/proc-{proc}"


def attempt_path(job: str, attempt: int) -> str:
    return f"{SCYLLA_JOBS}/{job}/attempt-{attempt}"


def info_path(job: str, attempt: int) -> str:
    return f"{attempt_path(job, attempt)}/info"


def registered_procs(children: list[str]) -> set[int]:
    """Process ids registered under a SINGA job's `proc` node (children named `proc-<K>`)."""
    out = set()
    for name in children:
        head, _, tail = name.partition("-")
        if head == "proc" and tail.isdigit():
            out.add(int(tail))
    return out


def may_register(proc: int, registered: set[int]) -> bool:
    """Whether process `proc` may start SINGA: every lower id has registered."""
    return all(k in registered for k in range(proc))


def missing_before(proc: int, registered: set[int]) -> list[int]:
    return [k for k in range(proc) if k not in registered]


def marks(children: list[str], kind: str) -> set[int]:
    """The proc ids of `live-<K>` or `done-<K>` children."""
    prefix = f"{kind}-"
    return {int(c[len(prefix):]) for c in children if c.startswith(prefix) and c[len(prefix):].isdigit()}


def lost_peers(seen_live: set[int], children: list[str], me: int) -> set[int]:
    """Peers once live, now gone without having finished (excluding `me`)."""
    live, done = marks(children, "live"), marks(children, "done")
    return {p for p in seen_live - live - done if p != me}


def stale_attempts(children: list[str], current: int) -> list[str]:
    """Attempt nodes of earlier attempts (their processes are gone), to remove."""
    out = []
    for c in children:
        head, _, tail = c.partition("-")
        if head == "attempt" and tail.isdigit() and int(tail) < current:
            out.append(c)
    return out
