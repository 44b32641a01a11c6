"""Per-node Docker engines: one dockerd in each node's network namespace.

A node engine is started with `nsenter --net=/var/run/netns/NODE` (not `ip
netns exec`, which remounts /sys so dockerd fails with "Devices cgroup isn't
mounted") and `unshare --uts` (so its swarm node is named after the node),
with its own data root, exec root, socket, pidfile, docker0 address and
cgroup parent. Stopping one removes its containers while it still answers,
then stops it, and sweeps what a crashed daemon can leave: processes in its
cgroup parent or under its roots (containerd, shims), mounts under its
roots, the cgroup directories, and the directories themselves.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import docker
import docker.errors

from scylla_singa.common.waiting import WaitTimeout, wait_until
from .netns import netns_path
from .sh import run

CGROUP_ROOT = Path("/sys/fs/cgroup")


class EngineError(RuntimeError):
    """A node engine did not start; the message carries the end of its log."""


def client(socket: str, timeout: int = 120) -> docker.DockerClient:
    return docker.DockerClient(base_url=f"unix://{socket}", timeout=timeout)


def answers(socket: str) -> bool:
    if not os.path.exists(socket):
        return False
    try:
        c = client(socket, timeout=5)
        try:
            return bool(c.ping())
        finally:
            c.close()
    except (docker.errors.DockerException, OSError):
        return False


def dockerd_argv(node: str, netns: str, socket: str, exec_root: str, pidfile: str, data_root: str,
                 bip: str, cgroup_parent: str, config_file: str) -> list[str]:
    """The command line of a node engine (pure)."""
    return ["nsenter", f"--net={netns_path(netns)}", "unshare", "--uts", "--",
            "sh", "-c", 'hostname "$0" && exec "$@"', node,
            "dockerd", "--config-file", config_file, "--data-root", data_root, "--exec-root", exec_root,
            "-H", f"unix://{socket}", "--pidfile", pidfile, "--bip", bip, "--cgroup-parent", cgroup_parent,
            "--log-level", "warn"]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def daemon_pid(pidfile: str, socket: str) -> int | None:
    """The pid of the running dockerd owning `socket`, from its pidfile (None if not running)."""
    try:
        pid = int(Path(pidfile).read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) and socket in cmdline(pid) else None


def start(node: str, netns: str, socket: str, exec_root: str, pidfile: str, data_root: str, bip: str,
          cgroup_parent: str, log: str, timeout_s: float = 60) -> dict:
    """Start the node's dockerd (or keep the running one) and wait until it answers. Returns {pid}."""
    pid = daemon_pid(pidfile, socket)
    if pid is None:
        for path in (exec_root, data_root, os.path.dirname(log)):
            os.makedirs(path, exist_ok=True)
        for stale in (pidfile, socket):
            if os.path.exists(stale):
                os.unlink(stale)
        config_file = os.path.join(os.path.dirname(socket), "daemon.json")
        Path(config_file).write_text("{}\n")  # not the host's /etc/docker/daemon.json
        argv = dockerd_argv(node, netns, socket, exec_root, pidfile, data_root, bip, cgroup_parent, config_file)
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        pid = proc.pid  # nsenter, unshare and sh all exec: this is dockerd
    wait_until(lambda: answers(socket) or not _alive(pid), timeout_s, f"dockerd of {node}",
               explain=lambda: _tail(log))
    if not answers(socket):
        raise EngineError(f"dockerd of {node} exited; last lines of {log}:\n{_tail(log)}")
    return {"pid": pid}


def _tail(path: str, lines: int = 15) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def remove_containers(socket: str) -> int:
    """Remove every container of the engine (all are job or test containers); returns how many."""
    if not answers(socket):
        return 0
    c = client(socket, timeout=60)
    try:
        found = c.containers.list(ignore_removed=True, all=True)
        for ctr in found:
            try:
                ctr.remove(force=True)
            except docker.errors.NotFound:
                pass
        return len(found)
    finally:
        c.close()


def stop(node: str, socket: str, exec_root: str, pidfile: str, data_root: str, cgroup_parent: str,
         keep_data: bool = False, timeout_s: float = 30, **_: object) -> None:
    """Stop the node engine and remove all it left; idempotent, works on a crashed engine."""
    remove_containers(socket)
    pid = daemon_pid(pidfile, socket)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        try:
            wait_until(lambda: not _alive(pid), timeout_s, f"dockerd of {node} to stop")
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            wait_until(lambda: not _alive(pid), 10, f"dockerd of {node} to die")
    roots = [exec_root, data_root]
    kill_processes(cgroup_pids(cgroup_parent) + processes_under(roots))
    unmount_under(roots)
    remove_cgroup(cgroup_parent)
    shutil.rmtree(os.path.dirname(socket), ignore_errors=True)
    if not keep_data:
        shutil.rmtree(data_root, ignore_errors=True)


def processes_under(roots: list[str]) -> list[int]:
    """Processes whose command line names one of `roots` (containerd, shims of a dead dockerd)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            cmd = cmdline(int(entry))
            if any(root and root in cmd for root in roots):
                found.append(int(entry))
    return found


def cgroup_dirs(cgroup_parent: str) -> list[Path]:
    """Every directory of `cgroup_parent` in every mounted hierarchy (cgroup v1 and v2), deepest first."""
    rel = cgroup_parent.strip("/")
    if not rel:
        return []
    tops = [p / rel for p in CGROUP_ROOT.iterdir() if (p / rel).is_dir()] if CGROUP_ROOT.is_dir() else []
    if (CGROUP_ROOT / rel).is_dir():
        tops.append(CGROUP_ROOT / rel)
    dirs = [d for top in tops for d, _, _ in os.walk(top)]
    return sorted({Path(d) for d in dirs}, key=lambda p: len(p.parts), reverse=True)


def cgroup_pids(cgroup_parent: str) -> list[int]:
    pids: set[int] = set()
    for d in cgroup_dirs(cgroup_parent):
        try:
            pids.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        except (OSError, ValueError):
            pass
    return sorted(pids)


def kill_processes(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if pids:
        wait_until(lambda: not any(_alive(p) for p in pids), 10, "killed processes to exit")


def mounts_under(roots: list[str]) -> list[str]:
    """Mount points at or below any of `roots`, deepest first."""
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].replace("\\040", " ")
            if any(root and (point == root or point.startswith(root.rstrip("/") + "/")) for root in roots):
                points.append(point)
    return sorted(set(points), key=lambda p: p.count("/"), reverse=True)


def unmount_under(roots: list[str]) -> None:
    for point in mounts_under(roots):
        run(["umount", "-l", point], check=False)


def remove_cgroup(cgroup_parent: str) -> None:
    for d in cgroup_dirs(cgroup_parent):
        try:  # a cgroup is busy until the kernel has reaped its last process
            wait_until(lambda d=d: _rmdir(d), 5, f"cgroup {d} to be removable")
        except WaitTimeout:
            pass


def _rmdir(d: Path) -> bool:
    """Whether directory `d` is gone (removing it now if it is empty)."""
    try:
        d.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def info(socket: str) -> dict:
    c = client(socket, timeout=10)
    try:
        return c.info()
    finally:
        c.close()


