"""Who a host-process task runs as, and the environment it gets: never the agent's own root, never its env.

Mesos runs a command task as CommandInfo.user, else FrameworkInfo.user, and
switches to that user in the child before exec (setgid, initgroups, setuid).
The agent runs as root, so without this a framework that reaches the master
gets root on every agent. The user string is resolved on this machine
(pwd) to a uid before any check: "0", "00", "+0", "0000:0" and any name
whose uid is 0 are all root, refused unless the agent allows root tasks.

The environment is built from nothing: the Mesos sandbox variables, a
standard PATH, and what the TaskInfo gives; the agent's own variables
(credentials, tokens) never reach a task.
"""

from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scylla_singa.mesos.api.container_info import numeric_uid

ALLOW_ROOT_FLAG = "--allow-root-tasks"
# What Mesos gives a task when its CommandInfo sets no PATH.
STANDARD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class TaskUserError(ValueError):
    """The task cannot run as the user it asks for; the message names the user and what to do."""


@dataclass(frozen=True)
class TaskUser:
    """A user of this machine a task runs as (resolved from pwd)."""

    name: str
    uid: int
    gid: int


def requested_user(command: dict[str, Any], framework: dict[str, Any]) -> tuple[str, str]:
    """(the user string, where it came from): CommandInfo.user, else FrameworkInfo.user, else this agent's
    own user (what Mesos does when FrameworkInfo.user is empty)."""
    given = command.get("user")
    if isinstance(given, str) and given.strip():
        return given.strip(), "CommandInfo.user"
    given = framework.get("user")
    if isinstance(given, str) and given.strip():
        return given.strip(), "FrameworkInfo.user"
    return pwd.getpwuid(os.getuid()).pw_name, "the agent's own user (FrameworkInfo.user is empty)"


def resolve_user(user: str, source: str, allow_root: bool) -> TaskUser:
    """`user` (a name or a uid, optionally NAME:GROUP, whose group part is ignored: a task gets its user's
    primary group) as a user of this machine; TaskUserError if unknown, or root when root is not allowed."""
    uid = numeric_uid(user)
    name = user.split(":", 1)[0].strip()
    try:
        entry = pwd.getpwuid(uid) if uid is not None else pwd.getpwnam(name)
    except (KeyError, OverflowError):
        raise TaskUserError(f"user {user!r} ({source}) is unknown on this agent's machine: "
                            "create it there or run the task as a user that exists") from None
    if entry.pw_uid == 0 and not allow_root:
        raise TaskUserError(f"user {user!r} ({source}) is uid 0 (root) and this agent does not run tasks as "
                            f"root: run the task as another user, or start the agent with {ALLOW_ROOT_FLAG}")
    return TaskUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def task_user(task_command: dict[str, Any], framework: dict[str, Any], allow_root: bool) -> TaskUser:
    """The user a process task runs as (requested_user, then resolve_user)."""
    return resolve_user(*requested_user(task_command, framework), allow_root)


def clean_environment(command: dict[str, Any], sandbox_vars: dict[str, str]) -> dict[str, str]:
    """A task's whole environment: PATH (standard unless given), the Mesos sandbox variables, then
    CommandInfo.environment's variables (they win, as in Mesos). Nothing of the agent's own."""
    env = {"PATH": STANDARD_PATH, **sandbox_vars}
    for var in (command.get("environment") or {}).get("variables") or []:
        if isinstance(var, dict) and isinstance(var.get("name"), str) and var["name"]:
            env[var["name"]] = str(var.get("value", ""))
    return env


def hand_sandbox_to(sandbox: Path, user: TaskUser, up_to: Path | None = None) -> None:
    """Make the sandbox the task user's (Mesos chowns it): the directory and everything in it (fetched files
    included), without following symlinks; the sandbox keeps its mode (0750). `up_to`: directories between
    it and this one (a task group's executor run) are handed over too, so the user can reach the sandbox."""
    if up_to is not None:
        for parent in reversed(sandbox.relative_to(up_to).parents):
            os.lchown(up_to / parent, user.uid, user.gid)
    for root, dirs, files in os.walk(sandbox, followlinks=False):
        os.lchown(root, user.uid, user.gid)
        for name in dirs + files:
            os.lchown(os.path.join(root, name), user.uid, user.gid)


def unreachable_parent(path: Path, user: TaskUser) -> Path | None:
    """The first directory above `path` the user may not search (x), if any: the task could not start in
    its sandbox. Judged by mode bits, as the kernel does for a user that is not root."""
    groups = set(os.getgrouplist(user.name, user.gid))
    for parent in reversed(path.parents):
        try:
            st = os.stat(parent)
        except OSError:
            return parent
        if st.st_uid == user.uid:
            allowed = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            allowed = st.st_mode & stat.S_IXGRP
        else:
            allowed = st.st_mode & stat.S_IXOTH
        if not allowed:
            return parent
    return None
