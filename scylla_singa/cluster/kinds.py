"""Create and destroy for each kind of resource in a plan.

`create(ctx, name, **params) -> facts` makes the resource (idempotent: an
existing one is kept) and returns what `destroy` needs to know (pids, ids).
`destroy(ctx, facts, name, **params)` removes it and tolerates it being gone.
Both are called with the resource's name and params exactly as planned.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker

from scylla_singa.images import node_sync
from scylla_singa.mesos.api.credentials import ensure_master_credentials
from scylla_singa.swarm.overlays import ensure_job_isolation
from . import apache_mesos, engines, launcher, netns, services, swarmjoin
from .netns import create_veth

Facts = dict[str, Any]


@dataclass
class Context:
    """What creates and destroys share: the host engine and the options of this run."""

    host: docker.DockerClient | None
    keep_data: bool = False
    echo: Callable[[str], None] = print
    notes: list[str] = field(default_factory=list)


class Skip(Exception):
    """A resource that cannot be made here yet and is left out (e.g. no `master` command)."""


# -- create -------------------------------------------------------------------
def directories(ctx: Context, name: str, paths: list[str]) -> Facts:
    for p in paths:
        os.makedirs(p, exist_ok=True)
    return {}


def credentials(ctx: Context, name: str, dir: str) -> Facts:
    """The cluster's secrets (kept across `up`s of the same data dir, like a master's own)."""
    ensure_master_credentials(Path(dir))
    return {}


def bridge(ctx: Context, name: str, address: str) -> Facts:
    netns.create_bridge(name, address)
    return {}


def iptables(ctx: Context, name: str, table: str, chain: str, rule: list[str], comment: str) -> Facts:
    netns.add_rule(table, chain, rule, comment)
    return {}


def namespace(ctx: Context, name: str) -> Facts:
    netns.create_netns(name)
    return {}


def veth(ctx: Context, name: str, netns: str, bridge: str, address: str, gateway: str) -> Facts:
    create_veth(name, netns, bridge, address, gateway)
    return {}


def engine(ctx: Context, name: str, **params: Any) -> Facts:
    return engines.start(**params)


def job_isolation(ctx: Context, name: str, netns: str) -> Facts:
    """The host's rule keeping job overlays apart, in the node's namespace (its engine's DOCKER-USER)."""
    ensure_job_isolation(netns)
    return {}


def swarm_member(ctx: Context, name: str, **params: Any) -> Facts:
    return swarmjoin.join(ctx.host, **params)


def images(ctx: Context, name: str, node: str, socket: str, images: list[str], cache: str, **_: Any) -> Facts:
    c = engines.client(socket, timeout=600)
    try:
        return node_sync.sync(ctx.host, c, node, images, cache)
    finally:
        c.close()


def service_network(ctx: Context, name: str, **params: Any) -> Facts:
    return services.create_network(ctx.host, name, **params)


def service(ctx: Context, name: str, **params: Any) -> Facts:
    return services.start(ctx.host, name, **params)


def service_ready(ctx: Context, name: str, container: str, timeout_s: float) -> Facts:
    services.wait_healthy(ctx.host, container, timeout_s)
    return {}


def process(ctx: Context, name: str, **params: Any) -> Facts:
    command = params["argv"][0]
    if not launcher.available(command):
        raise Skip(f"`scylla-singa {command}` is not available yet: {params['netns']} runs no {command}")
    return launcher.start(name=name, **params)


def mesos_daemon(ctx: Context, name: str, netns: str, argv: list[str], log: str, address: str,
                 timeout_s: float) -> Facts:
    """A real mesos-master or mesos-agent in its namespace, answering /health."""
    return apache_mesos.start(name, argv, log, address, netns_name=netns, timeout_s=timeout_s).facts()


# -- destroy ------------------------------------------------------------------
def _nothing(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    """Nothing to undo (a wait), or undone by another resource (images go with the data root)."""


def _directories(ctx: Context, facts: Facts, name: str, paths: list[str]) -> None:
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


def _credentials(ctx: Context, facts: Facts, name: str, dir: str) -> None:
    if not ctx.keep_data:
        shutil.rmtree(dir, ignore_errors=True)


def _link(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    netns.delete_link(name)


def _iptables(ctx: Context, facts: Facts, name: str, table: str, chain: str, rule: list[str], comment: str) -> None:
    netns.delete_rule(table, chain, rule, comment)


def _namespace(ctx: Context, facts: Facts, name: str) -> None:
    netns.delete_netns(name)


def _engine(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    engines.stop(keep_data=ctx.keep_data, **params)


def _swarm_member(ctx: Context, facts: Facts, name: str, socket: str, **params: Any) -> None:
    swarmjoin.leave(ctx.host, socket, facts.get("node_id"))


def _service_network(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    services.remove_network(ctx.host, name)


def _service(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    services.remove(ctx.host, name)


def _process(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    launcher.stop(facts.get("pid"), facts.get("start"))


def _mesos_daemon(ctx: Context, facts: Facts, name: str, **params: Any) -> None:
    """A master is terminated; an agent gets SIGUSR1: it kills its executors (their containers go),
    unregisters and exits."""
    if facts.get("pid"):
        apache_mesos.MesosDaemon.from_facts(facts).stop()


@dataclass(frozen=True)
class Kind:
    create: Callable[..., Facts]
    destroy: Callable[..., None]


KINDS: dict[str, Kind] = {
    "directories": Kind(directories, _directories),
    "credentials": Kind(credentials, _credentials),
    "bridge": Kind(bridge, _link),
    "iptables": Kind(iptables, _iptables),
    "netns": Kind(namespace, _namespace),
    "veth": Kind(veth, _link),
    "engine": Kind(engine, _engine),
    "job_isolation": Kind(job_isolation, _nothing),  # goes with the namespace
    "swarm_member": Kind(swarm_member, _swarm_member),
    "images": Kind(images, _nothing),
    "service_network": Kind(service_network, _service_network),
    "service": Kind(service, _service),
    "service_ready": Kind(service_ready, _nothing),
    "process": Kind(process, _process),
    "mesos_master": Kind(mesos_daemon, _mesos_daemon),
    "mesos_agent": Kind(mesos_daemon, _mesos_daemon),
}
