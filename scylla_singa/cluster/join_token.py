"""The join token `cluster init` prints and `cluster join` reads (pure).

A token carries everything a new machine needs to become a member, so that
`join` needs nothing but the token and the first machine's address:

- the master's address (or the zk:// URL the masters elect through) and
  the WebHDFS / ZooKeeper addresses of the cluster's services;
- the swarm manager's address and its worker join token (the job overlays
  span every member's engine);
- the agent credential (agents authenticate to the master) and the
  framework credential (the agent's endpoints accept it, so frameworks can
  read sandboxes; a member can run jobs with it too);
- when it stops being accepted, and an id naming it in `cluster status`.

Format: `scylla-join1.<base64url JSON>.<check>`, where check is the start of
the payload's SHA-256: a token cut short or mistyped in a copy is refused as
damaged before anything is tried. The token holds secrets: it is a password
(see README, "A cluster on your VMs").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
from dataclasses import asdict, dataclass
from typing import Any

from scylla_singa.mesos.api.credentials import Credential

PREFIX = "scylla-join1"
_CHECK_CHARS = 10


class JoinTokenError(ValueError):
    """The token cannot be used; the message says why and how to get a good one."""


@dataclass(frozen=True)
class JoinToken:
    """What a joining machine is told. `master` is "host:port" or "zk://host:2181/mesos"."""

    token_id: str
    cluster: str
    master: str
    swarm_manager: str           # "host:2377"
    swarm_token: str             # the swarm's worker join token
    agent: Credential
    framework: Credential
    expires_at: float            # seconds since the epoch
    webhdfs: str | None = None   # http://host:9870
    zk_hosts: str | None = None  # host:2181

    def to_payload(self) -> dict[str, Any]:
        d = asdict(self)
        d["agent"] = {"principal": self.agent.principal, "secret": self.agent.secret}
        d["framework"] = {"principal": self.framework.principal, "secret": self.framework.secret}
        return d

    @classmethod
    def from_payload(cls, d: dict[str, Any]) -> "JoinToken":
        return cls(token_id=str(d["token_id"]), cluster=str(d["cluster"]), master=str(d["master"]),
                   swarm_manager=str(d["swarm_manager"]), swarm_token=str(d["swarm_token"]),
                   agent=Credential(str(d["agent"]["principal"]), str(d["agent"]["secret"])),
                   framework=Credential(str(d["framework"]["principal"]), str(d["framework"]["secret"])),
                   expires_at=float(d["expires_at"]), webhdfs=d.get("webhdfs"), zk_hosts=d.get("zk_hosts"))


def new_token_id() -> str:
    return secrets.token_hex(4)


def _check(body: str) -> str:
    return hashlib.sha256(body.encode()).hexdigest()[:_CHECK_CHARS]


def encode(token: JoinToken) -> str:
    body = base64.urlsafe_b64encode(json.dumps(token.to_payload(), sort_keys=True,
                                               separators=(",", ":")).encode()).decode().rstrip("=")
    return f"{PREFIX}.{body}.{_check(body)}"


def decode(text: str, now: float) -> JoinToken:
    """The token in `text`, if it is whole and still valid at `now`. Raises JoinTokenError."""
    text = text.strip()
    fix = "copy the whole `scylla-singa cluster join` line the first machine printed, or make a new token there " \
          "with `scylla-singa cluster token`"
    if not text.startswith(PREFIX + "."):
        raise JoinTokenError(f"this is not a scylla-singa join token (it should start with {PREFIX}.); {fix}")
    parts = text.split(".")
    if len(parts) != 3 or _check(parts[1]) != parts[2]:
        raise JoinTokenError(f"the join token is damaged (cut short or mistyped: its check does not match); {fix}")
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        token = JoinToken.from_payload(json.loads(raw))
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise JoinTokenError(f"the join token does not hold what a join needs ({exc}); {fix}") from None
    if now >= token.expires_at:
        raise JoinTokenError(f"join token {token.token_id} of cluster {token.cluster!r} expired "
                             f"{_ago(now - token.expires_at)} ago; on the first machine, "
                             "`scylla-singa cluster token` makes a new one (--ttl sets how long it lasts)")
    return token


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
