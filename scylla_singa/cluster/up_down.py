"""`up` and `down`: the thin shell that executes a plan and undoes it.

`up` checks the machine, writes each resource to the state file, creates
it, records its facts, and marks the cluster "up" at the end. If anything
fails it undoes what it made (unless asked to keep it for a post-mortem)
and raises UpError naming the step. `down` destroys the recorded resources
in reverse order, then sweeps by discovery, so it also cleans up after a
crash, a partial `up`, or a lost state file; it is idempotent.
"""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import time
from collections.abc import Callable

import docker
import docker.errors

from . import discover, job_networks, launcher, lock, sh
from .config import ClusterConfig
from .kinds import Context, KINDS, Skip
from .resource_plan import Resource, plan
from .state import ClusterInfo, Entry, State, info, load, save

Echo = Callable[[str], None]
REQUIRED = ("ip", "iptables", "nsenter", "unshare", "dockerd", "umount")


class UpError(RuntimeError):
    """`cluster up` failed at a step; the message names it and why."""


def preflight(config: ClusterConfig) -> docker.DockerClient:
    """Check we can build the cluster here; return the host engine's client. UpError otherwise."""
    if os.geteuid() != 0:
        raise UpError("cluster up needs root (network namespaces, bridges, iptables, dockerd)")
    missing = [c for c in REQUIRED if shutil.which(c) is None]
    if missing:
        raise UpError(f"missing commands: {', '.join(missing)} (make setup installs them)")
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        if f.read().strip() != "1":  # nodes reach the services network and NAT through the host
            raise UpError("net.ipv4.ip_forward is 0 on this host (dockerd normally sets it); "
                          "`sysctl -w net.ipv4.ip_forward=1`, then retry")
    try:
        host = docker.from_env(timeout=600)
        host.ping()
    except docker.errors.DockerException as exc:
        raise UpError(f"the host Docker engine does not answer ({exc}); run `make setup`") from None
    clash = subnet_clashes(config, host)
    if clash:
        raise UpError(f"{clash}; choose free ranges with --subnet/--services-subnet (and --prefix)")
    needed = ([("scylla-hdfs:latest", "hdfs")] if config.hdfs else []) + \
             ([("scylla-zookeeper:latest", "zookeeper")] if config.zk else [])
    for tag, name in needed:
        try:
            host.images.get(tag)
        except docker.errors.ImageNotFound:
            raise UpError(f"image {tag} is missing: run `scylla-singa images build {name}`") from None
    return host


def subnet_clashes(config: ClusterConfig, host: docker.DockerClient) -> str | None:
    """Why the cluster's subnets cannot be used here (a route or a Docker network of someone
    else overlaps them), or None. Docker allocates new networks round-robin from 172.17-31/16
    and 192.168/16, so a long-lived engine may hold 172.31.0.0/16 by the time we come."""
    mine = {config.bridge, config.services_bridge}
    lan, svc = ipaddress.ip_network(config.subnet), ipaddress.ip_network(config.services_subnet)
    out = json.loads(sh.run(["ip", "-j", "route", "show"]) or "[]")
    for route in out:
        dst = route.get("dst", "")
        if "/" in dst and route.get("dev") not in mine:
            net = ipaddress.ip_network(dst, strict=False)
            for ours in (lan, svc):
                if ours.overlaps(net):
                    return f"{ours} overlaps the route to {net} on {route.get('dev')}"
    for net in host.networks.list():
        if net.name == config.services_network:
            continue
        for cfg in (net.attrs.get("IPAM") or {}).get("Config") or []:
            subnet = cfg.get("Subnet", "")
            if subnet.count(".") == 3:
                theirs = ipaddress.ip_network(subnet, strict=False)
                for ours in (lan, svc):
                    if ours.overlaps(theirs):
                        return f"{ours} overlaps Docker network {net.name} ({theirs})"
    return None


def up(config: ClusterConfig, echo: Echo = print, keep_on_failure: bool = False) -> ClusterInfo:
    """Bring the cluster up (see `plan`); returns what it offers. Idempotent for an identical config.

    Raises UpError when another process is bringing the same prefix up or down.
    """
    try:
        with lock.exclusive(config.prefix):
            return _up(config, echo, keep_on_failure)
    except lock.ClusterBusy as exc:
        raise UpError(str(exc)) from None


def _up(config: ClusterConfig, echo: Echo, keep_on_failure: bool) -> ClusterInfo:
    host = preflight(config)
    existing = load(config.state_file)
    if existing is not None:
        if existing.status == "up" and existing.config == config:
            echo("cluster is already up")
            return info(existing)
        if existing.status == "up":
            raise UpError(f"a different cluster {config.prefix!r} is up ({existing.config.nodes} nodes); "
                          "run `scylla-singa cluster down` first")
        echo("cleaning up an earlier, unfinished cluster first")
        down(existing.config, echo=echo, host=host)
    state = State(config, made_dirs=_missing_dirs([config.data_dir, config.run_dir]))
    ctx = Context(host=host, echo=echo)
    started = time.monotonic()
    ours = config.agents and config.masters and config.mesos == "ours"
    master_options = launcher.options_of("master") if ours else None
    for resource in plan(config, master_options or frozenset()):
        try:
            _create(state, ctx, resource)
        except Exception as exc:  # noqa: BLE001 - any failure ends `up` the same way
            state.status = "failed"
            save(state)
            message = f"cluster up failed at {resource.kind} {resource.name}: {exc}"
            if not keep_on_failure:
                echo(f"{message}\nundoing what was made")
                down(config, echo=echo, host=host)
            raise UpError(message) from exc
    state.status = "up"
    save(state)
    echo(f"cluster {config.prefix!r} up in {time.monotonic() - started:.1f}s")
    return info(state)


def _create(state: State, ctx: Context, resource: Resource) -> None:
    """Record `resource` (write-ahead: a crash during create still leaves it for `down`), create it,
    record its facts. A Skip is recorded as such and is not an error."""
    entry = Entry(resource)
    state.entries.append(entry)
    save(state)
    t0 = time.monotonic()
    try:
        entry.facts = KINDS[resource.kind].create(ctx, resource.name, **resource.params) or {}
        entry.done = True
    except Skip as skip:
        entry.facts = {"skipped": str(skip)}
        ctx.echo(f"  skip  {resource.name}: {skip}")
    save(state)
    if entry.done and time.monotonic() - t0 > 1:
        ctx.echo(f"  {resource.kind:<15} {resource.name} ({time.monotonic() - t0:.1f}s)")


def _missing_dirs(paths: list) -> list[str]:
    """The directories (with their parents) among `paths` that do not exist yet."""
    missing: list[str] = []
    for p in paths:
        missing += [str(d) for d in [p, *p.parents] if not d.exists() and str(d) not in missing]
    return missing


def down(config: ClusterConfig, echo: Echo = print, host: docker.DockerClient | None = None,
         keep_data: bool = False) -> list[str]:
    """Remove the cluster: recorded resources in reverse, then everything discovery finds.

    Idempotent; works with no state file (by discovery from `config`'s prefix,
    directories and subnet). Returns the problems met (each also echoed);
    everything else was removed. Raises ClusterBusy when another process is
    bringing the same prefix up or down.
    """
    with lock.exclusive(config.prefix):
        return _down(config, echo, host, keep_data)


def _down(config: ClusterConfig, echo: Echo, host: docker.DockerClient | None, keep_data: bool) -> list[str]:
    if host is None:
        try:
            host = docker.from_env(timeout=120)
            host.ping()
        except docker.errors.DockerException:
            host = None  # still remove namespaces, links, rules, processes and directories
    state = load(config.state_file)
    if state is not None:
        config = state.config
        state.status = "stopping"
        save(state)
    ctx = Context(host=host, keep_data=keep_data, echo=echo)
    problems: list[str] = []
    # Read while the node engines still answer; removed once they and their swarm nodes are gone.
    jobs = job_networks.jobs_on_nodes(config, discover.node_indexes(config)) if host is not None else set()
    for entry in reversed(state.entries if state else []):
        r = entry.resource
        if r.kind in ("service_network", "service", "swarm_member") and host is None:
            continue  # needs the host engine; the sweep below reports it
        try:
            KINDS[r.kind].destroy(ctx, entry.facts, r.name, **r.params)
        except Exception as exc:  # noqa: BLE001 - keep going, the sweep retries
            problems.append(f"{r.kind} {r.name}: {exc}")
    made = state.made_dirs if state else []
    try:
        for what in discover.sweep(config, host, keep_data=keep_data):
            echo(f"  removed {what}")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"sweep: {exc}")
    if jobs:  # overlays of jobs whose framework was stopped mid-job (a framework removes its own at the end)
        removed, trouble = job_networks.remove_job_networks(host, jobs)
        for what in removed:
            echo(f"  removed {what}")
        problems += trouble
    for d in sorted(made, key=len, reverse=True):  # directories `up` created, e.g. $SCYLLA_HOME
        if os.path.isdir(d) and not os.listdir(d):
            os.rmdir(d)
    for p in problems:
        echo(f"  problem: {p}")
    return problems
