"""Which user a task's container runs as, resolved to a uid before the root check.

Docker runs a container as the docker `user` parameter, else the image's
USER, else root. A check on the text alone misses root spelled "00", "+0",
"0000:0", or a name the image maps to uid 0; so a number is read as the
kernel reads it (container_info.numeric_uid) and a name is looked up in
the image's own /etc/passwd (the agent's machine has other users). A name
the image does not define is refused (Docker would fail later, less
clearly). An image with no USER runs as root: refused unless the agent
allows root tasks. We refuse rather than pick a default uid: a default
uid the image does not know has no home and may not read the image's
files, which fails later and less clearly than a refusal naming the fix.

`FrameworkInfo.user` does not choose a container's user (Mesos's Docker
containerizer ignores it too): the image or the task's `user` parameter does.
"""

from __future__ import annotations

from collections.abc import Callable

from scylla_singa.mesos.api.container_info import numeric_uid
from .task_user import ALLOW_ROOT_FLAG


class ContainerUserRefused(ValueError):
    """The container would run as root, or as a user its image does not define; the message says how to fix."""


def passwd_uid(passwd_text: str, name: str) -> int | None:
    """The uid of `name` in an /etc/passwd text, None when it has no such user."""
    for line in passwd_text.splitlines():
        fields = line.split(":")
        if len(fields) >= 3 and fields[0] == name:
            try:
                return int(fields[2])
            except ValueError:
                return None
    return None


def container_uid(image: str, param_user: str | None, image_user: str, passwd: Callable[[], str],
                  allow_root: bool) -> int:
    """The uid the container will run as (`param_user`: the docker `user` parameter, `image_user`: the image's
    Config.User, `passwd()`: the image's /etc/passwd, read only when a name must be resolved).
    ContainerUserRefused when that is root and root is not allowed, or when a name cannot be resolved."""
    user = (param_user or image_user or "").strip()
    source = "the docker parameter user" if param_user else f"image {image}'s USER"
    if not user:
        uid = 0
        why = f"image {image} has no USER, so it runs as root (uid 0)"
    else:
        uid = numeric_uid(user)
        if uid is None:
            name = user.split(":", 1)[0]
            uid = passwd_uid(passwd(), name)
            if uid is None:
                raise ContainerUserRefused(
                    f"user {name!r} ({source}) is not defined in image {image}'s /etc/passwd, so its uid cannot be "
                    "checked: give a numeric uid (docker parameter user=UID[:GID])")
        why = f"user {user!r} ({source}) is uid {uid} (root)"
    if uid == 0 and not allow_root:
        raise ContainerUserRefused(
            f"{why} and this agent does not run tasks as root: give a non-root docker parameter user=UID[:GID], "
            f"use an image whose USER is not root, or start the agent with {ALLOW_ROOT_FLAG}")
    return uid
