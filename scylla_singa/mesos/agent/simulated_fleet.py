"""Many simulated agents in one event loop, on one connection to the master (scale tests).

Per agent: one `AgentCore` (a few dicts) and no sockets, servers or files;
the master sees ordinary agents. `SimulatedFleet(master, count, ...)`:
`await start()`, `await wait_registered(timeout)`, `await stop()`.
"""

from __future__ import annotations

from typing import Any

from scylla_singa.common.waiting import wait_until_async
from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.mesos.api.resources import Resources, parse_attributes
from .agent_core import AgentCore, AgentInfo
from .master_link import MasterLink
from .simulated_runner import SimulatedRunner

DEFAULT_SIM_RESOURCES = "cpus:4;mem:8192;disk:10240;ports:[31000-32000]"


class SimulatedFleet:
    """`count` simulated agents named `<prefix>-<i>`, sharing one SimulatedRunner and one link."""

    def __init__(self, master: str, count: int, resources: str = DEFAULT_SIM_RESOURCES,
                 attributes: str = "", hostname_prefix: str = "sim", retry_interval: float = 10.0,
                 ping_timeout: float = 75.0, credential: Credential | None = None, tls: Any = None) -> None:
        runner = SimulatedRunner()
        res = Resources.parse(resources)
        attrs = parse_attributes(attributes)
        # each its own pid, as the agents of one Mesos process would be numbered (no port: nothing to serve)
        self.cores = [AgentCore(AgentInfo(f"{hostname_prefix}-{i}", res, attrs, pid=f"slave({i + 1})@127.0.0.1:0"),
                                runner, retry_interval=retry_interval) for i in range(count)]
        # The resend check visits every agent with tasks: a tick of a fifth of the resend interval (resends
        # come 10-12 s after the send instead of 10-10.5 s) keeps it off a fleet of 50,000's profile.
        self.link = MasterLink(master, self.cores, retry_tick=max(0.5, retry_interval / 5), ping_timeout=ping_timeout,
                               credential=credential, tls=tls)

    async def start(self) -> None:
        self.link.start()

    async def wait_registered(self, timeout: float = 30.0) -> None:
        """Until every agent has an id from the master; TimeoutError (naming how many did) after `timeout`."""
        await wait_until_async(lambda: all(c.registered for c in self.cores), timeout,
                               f"{len(self.cores)} simulated agents to register",
                               explain=lambda: f"{sum(c.registered for c in self.cores)} registered")

    async def stop(self) -> None:
        await self.link.stop()
        for core in self.cores:
            await core.shutdown(kill=True)
