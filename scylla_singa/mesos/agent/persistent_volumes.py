"""Persistent volumes on the agent: a directory per volume, kept across tasks until the volume is destroyed.

Mesos's layout: `<work_dir>/volumes/roles/<role>/<persistence id>`. The
master's CHECKPOINT_RESOURCES says which volumes exist (`sync`): new ones
get their directory (root's, 0750: nobody else's until a task uses it),
destroyed ones lose it and their data. A task whose resources name a
volume gets it mounted at the volume's container path: relative paths
inside its sandbox (as Mesos mounts them), absolute ones only in a container.
The first task to use a volume gets it as its own user (it is handed over
while still root's), as Mesos hands a new volume to its first task's user.

Names come from the master, which checked them; they are checked again
here, as they name directories.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scylla_singa.mesos.api.resources import ResourceError, Resources

_NAME = re.compile(r"[A-Za-z0-9._-]+")


class VolumeUnusable(ValueError):
    """A task's persistent volume cannot be given to it; the message says which and why."""


@dataclass(frozen=True)
class VolumeMount:
    """A persistent volume as a task sees it: its directory here, where the task sees it, read-only or not."""

    directory: Path
    container_path: str
    read_only: bool = False


def volume_dir(work_dir: Path, role: str, volume_id: str) -> Path:
    """The volume's directory; ValueError for a name that is not one directory name."""
    for name in (role, volume_id):
        if not _NAME.fullmatch(name) or name in (".", ".."):
            raise ValueError(f"{name!r} cannot name a volume directory")
    return work_dir / "volumes" / "roles" / role / volume_id


def sync(work_dir: Path, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    """Make the directories of volumes new in `after`, remove those of volumes gone from it (checkpointed
    resources, as the master sends them)."""
    old, new = _dirs(work_dir, before), _dirs(work_dir, after)
    for path in new - old:
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o750)
    for path in old - new:
        shutil.rmtree(path, ignore_errors=True)


def mounts_for(task_info: dict[str, Any], work_dir: Path, checkpointed: list[dict[str, Any]]) -> list[VolumeMount]:
    """The volumes a task's resources name, each one this agent holds; VolumeUnusable otherwise."""
    try:
        wanted = Resources.from_json(task_info.get("resources")).volumes()
    except ResourceError:
        return []   # the master checked the task's resources; nothing here names a volume
    held = {(reservation.role, volume.id) for volume, reservation, _ in _volumes(checkpointed)}
    mounts = []
    for volume, reservation, _ in wanted:
        if (reservation.role, volume.id) not in held:
            raise VolumeUnusable(f"persistent volume {volume.id} (role {reservation.role}) is not on this agent")
        if ".." in volume.container_path.split("/"):
            raise VolumeUnusable(f"persistent volume {volume.id}: container path {volume.container_path!r} "
                                 "must not contain '..'")
        directory = volume_dir(work_dir, reservation.role, volume.id)
        directory.mkdir(parents=True, exist_ok=True)
        mounts.append(VolumeMount(directory, volume.container_path, volume.mode == "RO"))
    return mounts


def hand_to(mounts: list[VolumeMount], uid: int, gid: int) -> None:
    """Give each volume still owned by root (never used) to the task's user."""
    for mount in mounts:
        if uid != 0 and mount.directory.stat().st_uid == 0:
            os.chown(mount.directory, uid, gid)


def reachable_in(sandbox: Path, mounts: list[VolumeMount]) -> None:
    """A container's user does not own its sandbox (root's, 0750): to reach a volume mounted inside it, it may
    traverse the sandbox (0751), still neither list nor write it. Only for a task with such a volume."""
    if any(not mount.container_path.startswith("/") for mount in mounts):
        os.chmod(sandbox, 0o751)


def _volumes(checkpointed: list[dict[str, Any]]) -> list[Any]:
    try:
        return Resources.from_json(checkpointed).volumes()
    except ResourceError:
        return []


def _dirs(work_dir: Path, checkpointed: list[dict[str, Any]]) -> set[Path]:
    out = set()
    for volume, reservation, _ in _volumes(checkpointed):
        try:
            out.add(volume_dir(work_dir, reservation.role, volume.id))
        except ValueError:
            continue
    return out
