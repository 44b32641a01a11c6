"""Keep the first machine's unauthenticated services (ZooKeeper, HDFS) to the cluster's own machines.

ZooKeeper and HDFS run here without authentication, on the machine's own
network (they must be reachable from every member). On a VM with a public
address that would open them to anyone, so `init` puts an iptables chain in
front of their ports: packets from the machine itself (loopback, its
containers' bridges) and from the swarm's nodes pass, all others are
dropped. The swarm's nodes are exactly the machines that joined with a
token, so `cluster guard`, supervised next to the masters, follows the
swarm's node list and adds the address of a machine that joins. Addresses
are added before stale ones are removed and the final DROP never moves, so
the chain is never open while it changes.

The rule text is pure (and tested); the rest runs iptables in this
machine's network namespace.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterable

import docker
import docker.errors

from scylla_singa.swarm.overlays import host_addresses

CHAIN = "SCYLLA-GUARD"
TRUSTED_INTERFACES = ("lo", "docker0", "docker_gwbridge")
FOLLOW_INTERVAL_S = 2.0


class GuardError(RuntimeError):
    """iptables refused a rule; the message has its stderr."""


def jump_rule(ports: Iterable[int]) -> list[str]:
    """INPUT's rule sending the guarded ports to the chain (pure)."""
    return ["-p", "tcp", "-m", "multiport", "--dports", ",".join(str(p) for p in sorted(ports)), "-j", CHAIN]


def allow_rule(address: str) -> list[str]:
    return ["-s", f"{address}/32", "-j", "RETURN"]


def chain_rules(allowed: Iterable[str]) -> list[list[str]]:
    """The whole chain, in order (pure): trusted interfaces, allowed addresses, then DROP."""
    return [*(["-i", i, "-j", "RETURN"] for i in TRUSTED_INTERFACES),
            *(allow_rule(a) for a in sorted(allowed)), ["-j", "DROP"]]


def allowed_in(listing: str) -> set[str]:
    """The addresses `iptables -S CHAIN` shows as allowed (pure)."""
    out = set()
    for line in listing.splitlines():
        words = line.split()
        if words[:2] == ["-A", CHAIN] and "-s" in words and words[-2:] == ["-j", "RETURN"]:
            out.add(words[words.index("-s") + 1].removesuffix("/32"))
    return out


def _iptables(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["iptables", "-w", "10", *args], capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise GuardError(f"iptables {' '.join(args)}: {proc.stderr.strip()}")
    return proc


def install(ports: Iterable[int], allowed: Iterable[str]) -> None:
    """Create (or re-create) the chain and send the ports to it; idempotent."""
    ports = list(ports)
    if _iptables("-N", CHAIN, check=False).returncode != 0:
        _iptables("-F", CHAIN)
    for rule in chain_rules(allowed):
        _iptables("-A", CHAIN, *rule)
    if _iptables("-C", "INPUT", *jump_rule(ports), check=False).returncode != 0:
        _iptables("-I", "INPUT", "1", *jump_rule(ports))


def sync(allowed: set[str]) -> None:
    """Make the chain allow exactly `allowed`: new addresses first, then the stale ones go."""
    current = allowed_in(_iptables("-S", CHAIN).stdout)
    for address in sorted(allowed - current):
        _iptables("-I", CHAIN, "1", *allow_rule(address))
    for address in sorted(current - allowed):
        _iptables("-D", CHAIN, *allow_rule(address), check=False)


def remove(ports: Iterable[int]) -> None:
    """Take the chain and its jump away; idempotent."""
    while _iptables("-D", "INPUT", *jump_rule(list(ports)), check=False).returncode == 0:
        pass
    _iptables("-F", CHAIN, check=False)
    _iptables("-X", CHAIN, check=False)


def swarm_addresses(client: docker.DockerClient) -> set[str]:
    """The addresses of the swarm's nodes (this engine is its manager)."""
    return {str(n.attrs.get("Status", {}).get("Addr", "")) for n in client.nodes.list()} - {"", "0.0.0.0"}


def follow(ports: list[int], client: docker.DockerClient, interval_s: float = FOLLOW_INTERVAL_S,
           stopped: Callable[[], bool] = lambda: False) -> None:
    """Keep the chain's addresses those of this machine and the swarm's nodes, until `stopped()`."""
    install(ports, set(host_addresses()))
    while not stopped():
        try:
            sync(set(host_addresses()) | swarm_addresses(client))
        except (docker.errors.DockerException, GuardError) as exc:
            print(f"guard: {exc}; trying again", flush=True)
        time.sleep(interval_s)


def run_guard(ports: list[int]) -> int:
    """`cluster guard`: follow until SIGTERM (the chain stays: `leave` removes it)."""
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    follow(ports, docker.from_env(timeout=30), stopped=lambda: stopping)
    return 0
