"""Host volumes of a task's container, checked at mount time: only its own job's directory, no swap window.

Under an allowed root (--allowed-host-paths) each directory directly below
the root is one job's (volume delivery makes `<root>/<job id>`; a shared
`run --workspace` directory is one too). A task's framework claims a job
directory the first time one of its tasks mounts it: the agent writes the
FrameworkID into `<job dir>/.scylla-framework-id` (created exclusively,
root-owned), and from then on a task of any other framework naming that
directory, or anything inside it, is refused. The FrameworkID is the
master's, not a path or label the task chose, so a task cannot name
another framework's job. The root itself is never mounted.

No check-then-mount window: right before the container is created, each
volume is walked again from its root, one component at a time without
following symlinks (confined_paths.open_confined), and every directory on
the way must be owned by root (or this agent's user) and writable by no
one else. Then nobody but root can swap a component for a symlink between
this walk and the engine's mount, and the path handed to the engine is
the one just walked. (A bind of the walked descriptor, /proc/<pid>/fd/N,
is what we tried first: runc refuses it, EINVAL, as the descriptor's mount
lives in another mount namespace.)
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from scylla_singa.contracts import VOLUME_OWNER_FILE as OWNER_FILE
from .confined_paths import PathRefused, lexically_within, open_confined

ROOTS_FLAG = "--allowed-host-paths"


class VolumeRefused(ValueError):
    """A volume the task may not mount (another framework's job, a root, a path someone could swap)."""


def pin_host_volume(host_path: str, roots: Sequence[Path], framework_id: str) -> str:
    """`host_path` (absolute, resolved when the task was checked) checked at mount time for a task of
    `framework_id`: under a root, resolving to itself still, inside one job directory that framework owns
    (claimed now if nobody does), reached with no symlink through directories only root may change.
    Returns the path to bind; VolumeRefused says why not."""
    real = os.path.realpath(host_path)
    root = next((r for r in map(os.path.realpath, roots) if lexically_within(host_path, [r])), None)
    if root is None:
        raise VolumeRefused(f"volume host_path {host_path} is outside the agent's allowed host paths "
                            f"{':'.join(str(r) for r in roots) or '(none)'} (agent flag {ROOTS_FLAG})")
    if real != host_path:
        raise VolumeRefused(f"volume host_path {host_path} refused at mount time: it goes through a symlink "
                            f"(it resolves to {real} now)")
    parts = [p for p in host_path[len(root):].split("/") if p]
    if not parts:
        raise VolumeRefused(f"volume host_path {host_path} is the allowed root {root} itself: a task mounts only "
                            "its own job's directory inside it")
    job_dir = os.path.join(root, parts[0])
    try:
        fd = open_confined(host_path, [root], check_parent=_only_root_may_change)
    except PathRefused as exc:
        raise VolumeRefused(f"volume host_path {host_path} refused at mount time: {exc}") from None
    except FileNotFoundError:
        raise VolumeRefused(f"volume host_path {host_path} does not exist on the agent") from None
    os.close(fd)
    _claim(job_dir, root, framework_id, host_path)
    return host_path


def _only_root_may_change(dir_fd: int, name: str) -> None:
    st = os.fstat(dir_fd)
    if st.st_uid not in (0, os.getuid()) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PathRefused(f"a directory on the way to {name!r} (owner uid {st.st_uid}, mode "
                          f"{stat.filemode(st.st_mode)}) can be changed by users other than root, who could "
                          "swap a component for a symlink before the mount")


def _claim(job_dir: str, root: str, framework_id: str, host_path: str) -> None:
    """The job directory's owner is `framework_id`: claimed now if unclaimed, else it must be that one."""
    fd = open_confined(job_dir, [root], flags=os.O_RDONLY | os.O_DIRECTORY)
    try:
        st = os.fstat(fd)
        if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
            raise VolumeRefused(f"{job_dir} is writable by every user without the sticky bit: anyone could "
                                f"replace its {OWNER_FILE}; make it 0755 (or 1777)")
        if _claim_first(fd, framework_id):
            return
        owner = _read_owner(fd, job_dir)
    finally:
        os.close(fd)
    if owner != framework_id:
        raise VolumeRefused(f"volume host_path {host_path} is inside {job_dir}, the job directory of another "
                            f"framework ({owner}); a task mounts only its own framework's job directories")


def _claim_first(dir_fd: int, framework_id: str) -> bool:
    """Write the owner file if there is none; False when another claim was first. The file appears whole
    (written under a name of its own, then hard-linked to OWNER_FILE, which fails if it exists): agents
    sharing a filesystem launch a job's tasks at the same moment, and one must never read another's claim
    half written (an empty owner)."""
    draft = f"{OWNER_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    draft_fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                       dir_fd=dir_fd)
    try:
        with os.fdopen(draft_fd, "w") as f:
            f.write(framework_id)
        try:
            os.link(draft, OWNER_FILE, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(draft, dir_fd=dir_fd)


def _read_owner(dir_fd: int, job_dir: str) -> str:
    try:
        fd = os.open(OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as exc:
        why = "is a symlink" if exc.errno == errno.ELOOP else exc.strerror
        raise VolumeRefused(f"{job_dir}/{OWNER_FILE} {why}: the directory's owner cannot be told") from None
    with os.fdopen(fd) as f:
        st = os.fstat(f.fileno())
        if st.st_uid not in (0, os.getuid()) or not stat.S_ISREG(st.st_mode):
            raise VolumeRefused(f"{job_dir}/{OWNER_FILE} was not written by the agent (owner uid {st.st_uid}): "
                                "the directory's owner cannot be told")
        return f.read(256).strip()
