"""The master's registration lifecycles as transition tables: frameworks, and agents' links.

The master (master_core.Master, agent_registry.AgentRegistry) executes the
instructions; these classes do no I/O.
"""

from __future__ import annotations

from scylla_singa.common.transition_table import Lifecycle, Table

# ---- a framework on the master ------------------------------------------
FRAMEWORK_TABLE: Table = {
    ("NEW", "subscribe"): ("CONNECTED", ("persist", "subscribed", "activate")),
    ("RECOVERED", "subscribe"): ("CONNECTED", ("persist", "subscribed", "activate")),
    ("CONNECTED", "subscribe"): ("CONNECTED", ("fail_over_stream", "persist", "subscribed")),
    ("DISCONNECTED", "subscribe"): ("CONNECTED", ("persist", "subscribed", "activate", "cancel_failover")),
    ("CONNECTED", "stream_closed"): ("DISCONNECTED", ("deactivate", "rescind_offers", "start_failover")),
    ("CONNECTED", "teardown"): ("REMOVED", ("close_stream", "remove")),
    ("DISCONNECTED", "teardown"): ("REMOVED", ("remove",)),
    ("RECOVERED", "teardown"): ("REMOVED", ("remove",)),
    ("DISCONNECTED", "failover_timeout"): ("REMOVED", ("remove",)),
    ("RECOVERED", "failover_timeout"): ("REMOVED", ("remove",)),
    ("DISCONNECTED", "stream_closed"): (None, ()),
    ("REMOVED", "stream_closed"): (None, ()),
    ("REMOVED", "teardown"): (None, ()),
    ("REMOVED", "failover_timeout"): (None, ()),
    ("CONNECTED", "failover_timeout"): (None, ()),
}


class FrameworkLifecycle(Lifecycle):
    """A framework's registration: NEW/RECOVERED -> CONNECTED <-> DISCONNECTED -> REMOVED."""

    table = FRAMEWORK_TABLE
    what = "framework"


# ---- an agent's link to the master ---------------------------------------
AGENT_TABLE: Table = {
    ("NEW", "register"): ("CONNECTED", ("add", "registered")),
    ("NEW", "reregister"): ("CONNECTED", ("add", "reconcile", "registered")),
    ("CONNECTED", "reregister"): ("CONNECTED", ("reconcile", "registered")),
    ("DISCONNECTED", "reregister"): ("CONNECTED", ("activate", "reconcile", "registered")),
    ("CONNECTED", "disconnected"): ("DISCONNECTED", ("deactivate", "rescind_offers", "start_timeout")),
    ("CONNECTED", "unreachable"): ("REMOVED", ("remove",)),   # pings unanswered: Mesos marks it unreachable
    ("DISCONNECTED", "timeout"): ("REMOVED", ("remove",)),
    ("DISCONNECTED", "disconnected"): (None, ()),
    ("CONNECTED", "timeout"): (None, ()),
    ("REMOVED", "timeout"): (None, ()),
    ("REMOVED", "disconnected"): (None, ()),
    ("REMOVED", "unreachable"): (None, ()),
}


class AgentLinkLifecycle(Lifecycle):
    """An agent as the master sees it: NEW -> CONNECTED <-> DISCONNECTED -> REMOVED (tasks lost)."""

    table = AGENT_TABLE
    what = "agent"
