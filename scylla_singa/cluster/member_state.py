"""What `cluster init` / `cluster join` changed on this machine, and what it is a member of.

`$SCYLLA_HOME/machine/member.json` records, write-ahead (each step is
written before it is taken), the swarm membership, the service containers,
the supervised processes and the secrets directory, so `cluster leave`
undoes exactly what was made, also after a failed or interrupted init or
join. It also tells `run` and `cluster status` where the cluster's master
and services are (as a ClusterInfo, like a cluster-in-a-box's).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scylla_singa.common.files import write_json_atomic
from scylla_singa.common.home import home_path
from scylla_singa.mesos.api.credentials import FRAMEWORK_CREDENTIAL_FILE
from .state import ClusterInfo
from .supervisor import Supervised

VERSION = 1
FIRST = "first"       # the machine `cluster init` ran on: masters, services, maybe an agent
MEMBER = "member"     # a machine that joined: an agent


def machine_dir(home: str | os.PathLike | None = None) -> Path:
    return Path(home or home_path()) / "machine"


def member_path(home: str | os.PathLike | None = None) -> Path:
    return machine_dir(home) / "member.json"


@dataclass
class MemberState:
    role: str
    cluster: str
    address: str
    status: str = "joining"                  # joining | member | leaving
    master: str | None = None                # what agents and frameworks are given
    masters: list[str] = field(default_factory=list)   # "ip:port" of the first machine's masters
    webhdfs: str | None = None
    zk_hosts: str | None = None
    swarm: str | None = None                 # "initialised" | "joined" | "kept"
    services: list[str] = field(default_factory=list)  # container names on this machine's engine
    guarded_ports: list[int] = field(default_factory=list)  # ports member_guard keeps to the cluster's machines
    supervised: list[Supervised] = field(default_factory=list)
    secrets_dir: str | None = None
    token_id: str | None = None              # the token this machine joined with
    tokens: list[dict[str, Any]] = field(default_factory=list)   # first machine: tokens made {id, expires_at}
    agent_hostname: str | None = None
    joined_at: float = field(default_factory=time.time)
    path: Path = field(default_factory=member_path)

    def to_dict(self) -> dict[str, Any]:
        return {"version": VERSION, "role": self.role, "cluster": self.cluster, "address": self.address,
                "status": self.status, "master": self.master, "masters": self.masters, "webhdfs": self.webhdfs,
                "zk_hosts": self.zk_hosts, "swarm": self.swarm, "services": self.services,
                "guarded_ports": self.guarded_ports,
                "supervised": [s.to_dict() for s in self.supervised], "secrets_dir": self.secrets_dir,
                "token_id": self.token_id, "tokens": self.tokens, "agent_hostname": self.agent_hostname,
                "joined_at": self.joined_at}

    @classmethod
    def from_dict(cls, d: dict[str, Any], path: Path) -> "MemberState":
        return cls(role=d["role"], cluster=d["cluster"], address=d["address"], status=d.get("status", "joining"),
                   master=d.get("master"), masters=list(d.get("masters") or []), webhdfs=d.get("webhdfs"),
                   zk_hosts=d.get("zk_hosts"), swarm=d.get("swarm"), services=list(d.get("services") or []),
                   guarded_ports=[int(p) for p in d.get("guarded_ports") or []],
                   supervised=[Supervised.from_dict(s) for s in d.get("supervised") or []],
                   secrets_dir=d.get("secrets_dir"), token_id=d.get("token_id"), tokens=list(d.get("tokens") or []),
                   agent_hostname=d.get("agent_hostname"), joined_at=float(d.get("joined_at", 0)), path=path)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.path, self.to_dict(), indent=1)

    def supervised_named(self, name: str) -> Supervised | None:
        return next((s for s in self.supervised if s.name == name), None)


def load_member(home: str | os.PathLike | None = None) -> MemberState | None:
    path = member_path(home)
    try:
        return MemberState.from_dict(json.loads(path.read_text()), path)
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a membership record ({exc}); `scylla-singa cluster leave --force` "
                         "removes what it can find") from None


def member_info(state: MemberState) -> ClusterInfo:
    """The cluster as `run` and `status` read it. Its machines share no filesystem (`shared_files`)."""
    cred = Path(state.secrets_dir) / FRAMEWORK_CREDENTIAL_FILE if state.secrets_dir else None
    zk = f"zk://{state.zk_hosts}/mesos" if state.zk_hosts else None
    return ClusterInfo(prefix=state.cluster, status="up" if state.status == "member" else state.status,
                       state_file=str(state.path), host_address=state.address, subnet="", masters=state.masters,
                       master=state.master, zk=zk, zk_hosts=state.zk_hosts, webhdfs=state.webhdfs,
                       hdfs=None, nodes=[], services={}, mesos="ours",
                       credential_file=str(cred) if cred and cred.exists() else None, shared_files=False)
