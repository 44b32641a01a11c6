"""Many simulated agents in one event loop, on one connection to the master (scale tests).

Per agent: one `AgentCore` (a few dicts) and no sockets, servers or files;
the master sees ordinary agents. `SimulatedFleet(master, count, ...)`:
`await start()`, `await wait_registered(timeout)`, `await stop()`.
"""

from __future__ import annotations

import asyncio
import time

from .agent_core import AgentCore, AgentInfo
from .agent_link import MasterLink
from .resources import Resources, parse_attributes
from .runner_sim import SimulatedRunner

DEFAULT_SIM_RESOURCES = "cpus:4;mem:8192;disk:10240;ports:[31000-32000]"


class SimulatedFleet:
    """`count` simulated agents named `<prefix>-<i>`, sharing one SimulatedRunner and one link."""

    def __init__(self, master: str, count: int, resources: str = DEFAULT_SIM_RESOURCES,
                 attributes: str = "", hostname_prefix: str = "sim", retry_interval: float = 10.0,
                 ping_timeout: float = 75.0) -> None:
        runner = SimulatedRunner()
        res = Resources.parse(resources)
        attrs = parse_attributes(attributes)
        self.cores = [AgentCore(AgentInfo(f"{hostname_prefix}-{i}", res, attrs), runner,
                                retry_interval=retry_interval) for i in range(count)]
        self.link = MasterLink(master, self.cores, ping_timeout=ping_timeout)

    async def start(self) -> None:
        self.link.start()

    async def wait_registered(self, timeout: float = 30.0) -> None:
        """Until every agent has an id from the master; TimeoutError after `timeout`."""
        deadline = time.monotonic() + timeout
        while not all(c.registered for c in self.cores):
            if time.monotonic() > deadline:
                n = sum(c.registered for c in self.cores)
                raise TimeoutError(f"{n} of {len(self.cores)} simulated agents registered within {timeout}s")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        await self.link.stop()
        for core in self.cores:
            await core.shutdown(kill=True)
