"""The cluster this machine can run jobs on: a cluster-in-a-box it runs, or the cluster it is a member of.

The one place other parts ask (`run`, `plan`, the credential lookup). A
cluster-in-a-box that is up comes first: it was started on purpose on this
machine; otherwise the membership `cluster init`/`join` recorded.
"""

from __future__ import annotations

import os

from .member_state import load_member, member_info
from .state import ClusterInfo, box_cluster


def local_cluster(home: str | os.PathLike | None = None, prefix: str | None = None) -> ClusterInfo | None:
    """A cluster-in-a-box that is up (see `box_cluster`), else this machine's membership, else None."""
    box = box_cluster(home, prefix)
    if box is not None or prefix is not None:
        return box
    try:
        member = load_member(home)
    except ValueError:
        return None
    return member_info(member) if member is not None and member.status == "member" else None
