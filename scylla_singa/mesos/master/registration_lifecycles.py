"""The master's registration lifecycles as transition tables: frameworks, and agents' links.

Each event and instruction is a type; the master (master_core.Master,
agent_registry.AgentRegistry) carries the instructions out through an
InstructionDispatch that covers every type its table emits. These classes
do no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scylla_singa.common.transition_table import Lifecycle, LifecycleRow, TransitionTable

# ---- a framework on the master ------------------------------------------


@dataclass(frozen=True)
class FrameworkSubscribes:
    """A SUBSCRIBE call: a new framework, or one failing over to a new stream."""


@dataclass(frozen=True)
class FrameworkStreamClosed:
    pass


@dataclass(frozen=True)
class FrameworkTornDown:
    """TEARDOWN from the framework."""


@dataclass(frozen=True)
class FrameworkFailoverExpired:
    """Its failover timeout passed without a re-subscription."""


@dataclass(frozen=True)
class PersistFramework:
    pass


@dataclass(frozen=True)
class SendSubscribed:
    """SUBSCRIBED and a first HEARTBEAT on the framework's new stream."""


@dataclass(frozen=True)
class FailOverOldStream:
    """ERROR "Framework failed over" on the stream it had, then close that stream."""


@dataclass(frozen=True)
class ActivateFramework:
    pass


@dataclass(frozen=True)
class CancelFailoverTimer:
    pass


@dataclass(frozen=True)
class DeactivateFramework:
    pass


@dataclass(frozen=True)
class RescindFrameworkOffers:
    pass


@dataclass(frozen=True)
class StartFailoverTimer:
    pass


@dataclass(frozen=True)
class CloseFrameworkStream:
    pass


@dataclass(frozen=True)
class RemoveFramework:
    pass


_SUBSCRIBED = (PersistFramework, SendSubscribed, ActivateFramework)
FRAMEWORK_TABLE: TransitionTable[LifecycleRow] = TransitionTable(
    "framework", ("NEW", "RECOVERED", "CONNECTED", "DISCONNECTED", "REMOVED"),
    (FrameworkSubscribes, FrameworkStreamClosed, FrameworkTornDown, FrameworkFailoverExpired), {
        ("NEW", FrameworkSubscribes): ("CONNECTED", _SUBSCRIBED),
        ("RECOVERED", FrameworkSubscribes): ("CONNECTED", _SUBSCRIBED),
        ("CONNECTED", FrameworkSubscribes): ("CONNECTED", (FailOverOldStream, PersistFramework, SendSubscribed)),
        ("DISCONNECTED", FrameworkSubscribes): ("CONNECTED", _SUBSCRIBED + (CancelFailoverTimer,)),
        ("CONNECTED", FrameworkStreamClosed): ("DISCONNECTED", (DeactivateFramework, RescindFrameworkOffers,
                                                                StartFailoverTimer)),
        ("CONNECTED", FrameworkTornDown): ("REMOVED", (CloseFrameworkStream, RemoveFramework)),
        ("DISCONNECTED", FrameworkTornDown): ("REMOVED", (RemoveFramework,)),
        ("RECOVERED", FrameworkTornDown): ("REMOVED", (RemoveFramework,)),
        ("DISCONNECTED", FrameworkFailoverExpired): ("REMOVED", (RemoveFramework,)),
        ("RECOVERED", FrameworkFailoverExpired): ("REMOVED", (RemoveFramework,)),
        # Late or repeated: nothing to do.
        ("DISCONNECTED", FrameworkStreamClosed): (None, ()),
        ("REMOVED", FrameworkStreamClosed): (None, ()),
        ("REMOVED", FrameworkTornDown): (None, ()),
        ("REMOVED", FrameworkFailoverExpired): (None, ()),
        ("CONNECTED", FrameworkFailoverExpired): (None, ()),
    })


class FrameworkLifecycle(Lifecycle):
    """A framework's registration: NEW/RECOVERED -> CONNECTED <-> DISCONNECTED -> REMOVED."""

    table = FRAMEWORK_TABLE


# ---- an agent's link to the master ---------------------------------------


@dataclass(frozen=True)
class AgentRegisters:
    """REGISTER from an agent with no id yet; `ref` is echoed in the answer."""

    info: dict[str, Any]
    ref: Any = None


@dataclass(frozen=True)
class AgentReregisters:
    """REGISTER from an agent that has an id: its `info` lists the tasks it holds."""

    info: dict[str, Any]
    ref: Any = None


@dataclass(frozen=True)
class AgentDisconnected:
    """Its link closed."""


@dataclass(frozen=True)
class AgentUnreachable:
    """Its link did not answer pings for agent_ping_misses intervals (Mesos marks it unreachable), or the
    operator marked it gone (MARK_AGENT_GONE)."""

    message: str | None = None


@dataclass(frozen=True)
class AgentReregisterTimeout:
    """Disconnected for agent_reregister_timeout."""


@dataclass(frozen=True)
class AddAgent:
    pass


@dataclass(frozen=True)
class SendAgentRegistered:
    ref: Any = None


@dataclass(frozen=True)
class ReconcileAgentTasks:
    """Make the master's view of the agent's tasks what the agent reports in `info`."""

    info: dict[str, Any]


@dataclass(frozen=True)
class ActivateAgent:
    pass


@dataclass(frozen=True)
class DeactivateAgent:
    pass


@dataclass(frozen=True)
class RescindAgentOffers:
    pass


@dataclass(frozen=True)
class StartReregisterTimer:
    pass


@dataclass(frozen=True)
class RemoveAgent:
    """Its tasks are lost, frameworks get FAILURE; `message` says why (else a default)."""

    message: str | None = None


AGENT_TABLE: TransitionTable[LifecycleRow] = TransitionTable(
    "agent", ("NEW", "CONNECTED", "DISCONNECTED", "REMOVED"),
    (AgentRegisters, AgentReregisters, AgentDisconnected, AgentUnreachable, AgentReregisterTimeout), {
        ("NEW", AgentRegisters): ("CONNECTED", (AddAgent, SendAgentRegistered)),
        ("NEW", AgentReregisters): ("CONNECTED", (AddAgent, ReconcileAgentTasks, SendAgentRegistered)),
        ("CONNECTED", AgentReregisters): ("CONNECTED", (ReconcileAgentTasks, SendAgentRegistered)),
        ("DISCONNECTED", AgentReregisters): ("CONNECTED", (ActivateAgent, ReconcileAgentTasks,
                                                           SendAgentRegistered)),
        ("CONNECTED", AgentDisconnected): ("DISCONNECTED", (DeactivateAgent, RescindAgentOffers,
                                                            StartReregisterTimer)),
        ("CONNECTED", AgentUnreachable): ("REMOVED", (RemoveAgent,)),
        ("DISCONNECTED", AgentReregisterTimeout): ("REMOVED", (RemoveAgent,)),
        # MARK_AGENT_GONE of an agent that already left (`cluster leave` stops it, then marks it gone).
        ("DISCONNECTED", AgentUnreachable): ("REMOVED", (RemoveAgent,)),
        # Late or repeated: nothing to do.
        ("DISCONNECTED", AgentDisconnected): (None, ()),
        ("CONNECTED", AgentReregisterTimeout): (None, ()),
        ("REMOVED", AgentReregisterTimeout): (None, ()),
        ("REMOVED", AgentDisconnected): (None, ()),
        ("REMOVED", AgentUnreachable): (None, ()),
    })


class AgentLinkLifecycle(Lifecycle):
    """An agent as the master sees it: NEW -> CONNECTED <-> DISCONNECTED -> REMOVED (tasks lost)."""

    table = AGENT_TABLE
