"""The master's records: frameworks, agents, tasks, offers, and its configuration."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from scylla_singa.mesos.api.resources import Resources
from .registration_lifecycles import AgentLinkLifecycle, FrameworkLifecycle

MAX_STATUSES = 8


class CallError(Exception):
    """A scheduler or operator call refused with an HTTP status (400, 403, 409, ...) and Mesos's text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Outbox(Protocol):
    """Where the master's messages to one peer go (an event stream or an agent link); never blocks."""

    def send(self, message: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


@dataclass
class MasterConfig:
    """The master's flags (see `scylla-singa master --help`)."""

    host: str = "127.0.0.1"
    port: int = 5050
    advertise_host: str | None = None
    work_dir: Path | None = None
    allocator: str = "drf"
    allocation_interval: float = 1.0
    offer_timeout: float | None = None
    heartbeat_interval: float = 15.0
    agent_ping_interval: float = 15.0
    agent_ping_misses: int = 5
    agent_reregister_timeout: float = 75.0
    recovered_framework_timeout: float = 600.0
    credentials: dict[str, str] | None = None   # principal -> secret; None: insecure (anyone may call)
    authenticate_readonly: bool = True          # read-only endpoints too (Mesos's --authenticate_http_readonly)
    acls: Any = None                            # an Acls (acls.py); None: every authenticated principal may all
    tls: Any = None                             # an ssl.SSLContext (api/tls.py): serve HTTPS and wss; None: HTTP
    role_weights: dict[str, float] = field(default_factory=dict)
    max_completed_tasks: int = 1000
    default_kill_grace: float = 3.0
    # Limits (issue 14). Live frameworks one principal may have registered (without credentials: one
    # source address); a new registration beyond it is refused with 429.
    max_frameworks_per_principal: int = 100
    # A framework whose stream breaks before it ever launched a task is removed after this many seconds
    # at most, whatever failover_timeout it asked for (registrations nobody uses do not pile up).
    unused_framework_timeout: float = 60.0
    # Seconds a client has to send a request's line and headers (from connecting, or from the first
    # byte of a later request on the connection) before the master closes the connection.
    header_read_timeout: float = 5.0


@dataclass
class TaskRec:
    framework_id: str
    task_id: str
    agent_id: str
    info: dict[str, Any]
    resources: Resources
    state: str = "TASK_STAGING"
    status: dict[str, Any] | None = None
    statuses: list[dict[str, Any]] = field(default_factory=list)   # the last MAX_STATUSES TaskStatus, whole
    kill_grace: float | None = None   # set once a KILL was asked
    role: str = "*"                   # the role its resources are allocated to
    executor_id: str = ""             # its executor's id; "" for a command task (as Mesos's /state writes)

    def record(self, status: dict[str, Any]) -> None:
        """The task's latest status. One of the same state as the last one replaces it (a resent update, a
        health change), as Mesos's master keeps `statuses`: one entry per state change."""
        self.state = status["state"]
        self.status = status
        if self.statuses and self.statuses[-1].get("state") == status["state"]:
            self.statuses.pop()
        self.statuses.append(status)
        del self.statuses[:-MAX_STATUSES]


@dataclass
class OfferRec:
    id: str
    framework_id: str
    agent_id: str
    resources: Resources
    timer: Any = None
    message: dict[str, Any] | None = None   # the Offer as it was sent (the v1 operator API lists it)


@dataclass
class FrameworkRec:
    id: str
    info: dict[str, Any]
    role: str
    lifecycle: FrameworkLifecycle
    registered_time: float
    stream: Outbox | None = None
    stream_id: str | None = None
    tasks: dict[str, TaskRec] = field(default_factory=dict)
    offers: set[str] = field(default_factory=set)
    completed: deque = field(default_factory=lambda: deque(maxlen=1000))
    failover_timer: Any = None
    principal: str | None = None
    # who registered it, for max_frameworks_per_principal: its principal, or "anonymous@ADDRESS"
    # (None: recovered from the store or an agent, not re-subscribed yet)
    registrant: str | None = None
    reregistered_time: float | None = None   # its last re-subscription (None: never re-subscribed)
    unregistered_time: float = 0.0           # when its stream last broke or it was removed (0: connected)
    # custom executors it runs, by (agent id, executor id): {"info": ExecutorInfo, "agent_id": ...}
    executors: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    counters: dict[str, float] = field(default_factory=dict)   # its metrics (calls/..., events/..., offers/...)
    # the capability names of info["capabilities"], with that list (has_capability)
    _capabilities: tuple[Any, frozenset[str]] = field(default=(None, frozenset()), init=False, repr=False,
                                                      compare=False)

    @property
    def connected(self) -> bool:
        return self.lifecycle.state == "CONNECTED"

    @property
    def active(self) -> bool:
        """Connected and offered resources (Mesos's `active`; this master deactivates only the disconnected)."""
        return self.connected

    @property
    def failover_timeout(self) -> float:
        return float(self.info.get("failover_timeout", 0.0) or 0.0)

    def has_capability(self, name: str) -> bool:
        # Asked two or three times per offer (issue 17): the names are kept with the list they came from,
        # and made again when `info` holds another list (UPDATE_FRAMEWORK replaces it, never edits it).
        listed = self.info.get("capabilities")
        source, names = self._capabilities
        if listed is not source:
            names = frozenset(c.get("type") for c in listed or ())
            self._capabilities = (listed, names)
        return name in names

    @property
    def allocation_role(self) -> str | None:
        """The role written in allocation_info of what this framework is offered and holds (MULTI_ROLE
        frameworks only; Mesos leaves allocation_info out for the others' offers)."""
        return self.role if self.has_capability("MULTI_ROLE") else None


@dataclass
class AgentRec:
    id: str
    hostname: str
    port: int
    ip: str
    total: Resources
    attributes: list[dict[str, Any]]
    lifecycle: AgentLinkLifecycle
    registered_time: float
    link: Outbox | None = None
    tasks: dict[tuple[str, str], TaskRec] = field(default_factory=dict)
    offers: set[str] = field(default_factory=set)
    timer: Any = None
    healthy: bool = True          # False: its containerizer does not work; it offers nothing
    health_message: str = ""
    pid: str = ""                 # its libprocess-style pid, slave(N)@ip:port (unique per agent)
    version: str = ""             # the Mesos API version it speaks
    reregistered_time: float | None = None
    operator_deactivated: bool = False   # DEACTIVATE_AGENT / DRAIN_AGENT: offers nothing until REACTIVATE_AGENT
    principal: str | None = None         # who registered it; only that principal may re-register it

    @property
    def active(self) -> bool:
        return self.lifecycle.state == "CONNECTED"

    def used(self) -> Resources:
        """What its tasks hold."""
        return sum((t.resources for t in self.tasks.values()), Resources())

    def url(self) -> dict[str, Any] | None:
        if not self.port:
            return None
        return {"scheme": "http", "address": {"hostname": self.hostname, "ip": self.ip, "port": self.port},
                "path": "/slave(1)"}
