"""`scylla-singa cluster ...`: a multi-host cluster on one machine (up/down), and the group of init/join/leave."""

from __future__ import annotations

import json
import sys

import click
import docker
import docker.errors

from scylla_singa.cluster.config import (ClusterConfig, ConfigError, DEFAULT_PREFIX, DEFAULT_RESOURCES,
                                         DEFAULT_SERVICES_SUBNET, DEFAULT_SUBNET)
from scylla_singa.cluster.liveness import probe
from scylla_singa.cluster.lock import ClusterBusy
from scylla_singa.cluster.state import load, state_path
from scylla_singa.cluster.up_down import UpError, down, up
from .membership_commands import (guard_cmd, init_cmd, join_cmd, leave_cmd, show_member_status, supervise_cmd,
                                  token_cmd)

_prefix = click.option("--prefix", default=DEFAULT_PREFIX, show_default=True,
                       help="Name prefix of everything the cluster creates (run several clusters side by side).")


@click.group()
def cluster() -> None:
    """A cluster on your machines (init/join/leave), or a real multi-host
    cluster on this one machine (up/down): each host a network namespace
    with its own Docker engine, all in the host engine's Docker Swarm;
    Apache HDFS and ZooKeeper; masters and one agent per host.

    \b
    On separate machines (VMs):
      scylla-singa cluster init --zk --hdfs        # on the first; prints the join line
      scylla-singa cluster join --token T ADDR     # on each other
      scylla-singa cluster status
      scylla-singa cluster leave                   # on each, the first last
    On this machine:
      scylla-singa cluster up --nodes 3 --masters 2 --zk --hdfs
      scylla-singa cluster status --json
      scylla-singa cluster down
    Needs root. State: $SCYLLA_HOME/machine/ and $SCYLLA_HOME/cluster/<prefix>/."""


for _command in (init_cmd, join_cmd, token_cmd, leave_cmd, supervise_cmd, guard_cmd):
    cluster.add_command(_command)


@cluster.command("up")
@click.option("--nodes", default=2, show_default=True, help="Hosts (namespace + dockerd + agent each).")
@click.option("--masters", default=1, show_default=True, help="Masters; more than one needs --zk.")
@click.option("--hdfs", is_flag=True, help="Start Apache HDFS (NameNode + DataNode, WebHDFS on port 9870).")
@click.option("--zk", is_flag=True, help="Start Apache ZooKeeper; masters elect their leader through it.")
@click.option("--resources", default=DEFAULT_RESOURCES, show_default=True, help="What each agent offers.")
@click.option("--node-resources", "node_resources", multiple=True, metavar="N=SPEC",
              help='What node N\'s agent offers instead, e.g. 3="cpus:8;mem:16384;gpus:1" (repeatable).')
@click.option("--image", "images", multiple=True,
              help="Image to load into every node engine (repeatable; default scylla-tiny:latest and "
                   "singa:latest and singa-py:latest, when the host has them).")
@click.option("--agent-timeout", metavar="DURATION", default=None,
              help="Masters mark an agent unreachable (its tasks LOST) when it is silent this long, and "
                   "remove a disconnected one after it; e.g. 10s [default: Mesos's, 15s x 5 pings and 75s].")
@click.option("--no-agents", is_flag=True, help="Only hosts, engines and services: start no masters or agents.")
@click.option("--machines", "bare_machines", is_flag=True,
              help="Only bare machines: hosts with their engines and images, outside any swarm, with no masters, "
                   "agents or services; then run `cluster init` in the first (`ip netns exec`) and `cluster join` "
                   "in the others, as on separate VMs.")
@click.option("--mesos", "mesos", type=click.Choice(["ours", "apache"]), default="ours", show_default=True,
              help="Whose masters and agents run: scylla-singa's own, or Apache Mesos's mesos-master and "
                   "mesos-agent (Docker containerizer on each host's engine; masters elect through ZooKeeper "
                   "with a replicated log: use 1 or 3 masters).")
@click.option("--mesos-home", metavar="DIR", default=None,
              help="The Apache Mesos install (holding bin/mesos-master) for --mesos apache [default: $MESOS_HOME, "
                   "else what tools/ensure_mesos.sh unpacked].")
@click.option("--subnet", default=DEFAULT_SUBNET, show_default=True, help="The cluster LAN (host bridge).")
@click.option("--services-subnet", default=DEFAULT_SERVICES_SUBNET, show_default=True,
              help="The Docker network of HDFS and ZooKeeper.")
@_prefix
@click.option("--keep-on-failure", is_flag=True, help="Leave a failed cluster in place to look at (then `down`).")
@click.option("--json", "as_json", is_flag=True, help="Print the cluster's addresses as JSON when up.")
def up_cmd(nodes: int, masters: int, hdfs: bool, zk: bool, resources: str, node_resources: tuple[str, ...],
           images: tuple[str, ...], agent_timeout: str | None, no_agents: bool, bare_machines: bool, mesos: str,
           mesos_home: str | None,
           subnet: str, services_subnet: str, prefix: str, keep_on_failure: bool, as_json: bool) -> None:
    """Create the hosts, engines, swarm membership, images, services, masters and agents."""
    from scylla_singa.common.durations import parse_duration
    if mesos_home and mesos != "apache":
        raise click.UsageError("--mesos-home is for --mesos apache")
    try:
        timeout = parse_duration(agent_timeout, allow_none=True)
        home = _mesos_home(mesos_home) if mesos == "apache" and not no_agents else None
        config = ClusterConfig(nodes=nodes, masters=masters, hdfs=hdfs, zk=zk,
                               agents=not (no_agents or bare_machines), swarm=not bare_machines,
                               prefix=prefix, subnet=subnet, services_subnet=services_subnet,
                               resources=resources, node_resources=_node_resources(node_resources),
                               agent_timeout=timeout, mesos=mesos, mesos_home=home,
                               **({"images": images} if images else {}))
    except ValueError as exc:  # ConfigError too
        raise click.UsageError(str(exc)) from None
    echo = (lambda m: click.echo(m, err=True)) if as_json else click.echo
    try:
        result = up(config, echo=echo, keep_on_failure=keep_on_failure)
    except UpError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=1))
        return
    for n in result.nodes:
        click.echo(f"  {n.name:<16} {n.address:<16} {n.docker_host}" + (f"  agent {n.agent}" if n.agent else ""))
    if result.master:
        whose = "  Apache Mesos" if result.mesos == "apache" else ""
        click.echo(f"  master  {result.master}" + (f"  ({', '.join(result.masters)})" if result.zk else "") + whose)
    if result.zk:
        click.echo(f"  zookeeper  {result.zk}")
    if result.webhdfs:
        click.echo(f"  webhdfs  {result.webhdfs}   ({result.hdfs})")


def _mesos_home(given: str | None) -> str:
    """The Apache Mesos install to run: --mesos-home, $MESOS_HOME, or tools/ensure_mesos.sh's (exit 1 if none)."""
    from scylla_singa.cluster.apache_mesos import MesosError, find_install
    try:
        return str(find_install(given).home)
    except MesosError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


def _node_resources(values: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """`3=cpus:8;mem:16384` pairs; ValueError naming the bad one."""
    out = []
    for value in values:
        number, sep, spec = value.partition("=")
        if not sep or not number.strip().isdigit():
            raise ValueError(f"--node-resources {value!r}: give N=SPEC, e.g. 3=\"cpus:8;mem:16384\"")
        out.append((int(number), spec.strip()))
    return tuple(out)


@cluster.command("status")
@_prefix
@click.option("--json", "as_json", is_flag=True, help="Machine-readable: addresses, nodes, agents, services.")
def status_cmd(prefix: str, as_json: bool) -> None:
    """Show the cluster's addresses and what of it is alive. Exits 1 when no cluster is up.

    On a machine of `cluster init`/`join`: every machine of the cluster, its
    role and health (exit 3 when one is unhealthy)."""
    state = load(state_path(prefix=prefix))
    if state is None and prefix == DEFAULT_PREFIX and show_member_status(as_json):
        return
    if state is None:
        if as_json:
            click.echo(json.dumps({"prefix": prefix, "status": "down"}))
        else:
            click.echo(f"no cluster {prefix!r} (no {state_path(prefix=prefix)})")
        sys.exit(1)
    try:
        host = docker.from_env(timeout=30)
        host.ping()
    except docker.errors.DockerException:
        host = None
    report = probe(state, host)
    if as_json:
        click.echo(json.dumps(report, indent=1))
        return
    click.echo(f"cluster {report['prefix']!r}: {report['status']}  (state {report['state_file']})")
    for n in report["nodes"]:
        click.echo(f"  {n['name']:<16} {n['address']:<15} engine {n['engine']:<8} swarm {n.get('swarm', '-'):<9}"
                   f" agent {n['agent_process']}")
    for name, st in report["master_processes"].items():
        click.echo(f"  {name:<16} master {st}")
    for svc, st in report["service_containers"].items():
        click.echo(f"  {svc:<16} {st}")
    for k in ("master", "zk", "webhdfs"):
        if report.get(k):
            click.echo(f"  {k}: {report[k]}")
    for s in report["skipped"]:
        click.echo(f"  skipped: {s}")


@cluster.command("down")
@_prefix
@click.option("--subnet", default=DEFAULT_SUBNET, show_default=True,
              help="The cluster LAN, used only when the state file is gone (to find swarm nodes).")
@click.option("--keep-data", is_flag=True, help="Keep the node engines' data roots (their images) for the next up.")
def down_cmd(prefix: str, subnet: str, keep_data: bool) -> None:
    """Remove everything `up` made (also after a crash or a partial up); idempotent."""
    try:
        config = ClusterConfig(prefix=prefix, subnet=subnet)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        problems = down(config, echo=click.echo, keep_data=keep_data)
    except ClusterBusy as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if problems:
        click.echo(f"cluster {prefix!r} down with {len(problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo(f"cluster {prefix!r} down")


@cluster.command("check")
@_prefix
@click.option("--image", default="scylla-tiny:latest", show_default=True, help="Image with busybox sh and nc.")
def check_cmd(prefix: str, image: str) -> None:
    """Prove the cluster works: for each pair of neighbouring nodes, a container
    on one reaches a container on the other by name over a fresh job overlay;
    WebHDFS and ZooKeeper answer. Exits 1 on the first failure."""
    from scylla_singa.cluster.checks import run_checks

    state = load(state_path(prefix=prefix))
    if state is None or state.status != "up":
        click.echo(f"no cluster {prefix!r} is up; run `scylla-singa cluster up`", err=True)
        sys.exit(1)
    ok = True
    for line, passed in run_checks(state, docker.from_env(timeout=120), image):
        click.echo(("  ok    " if passed else "  FAIL  ") + line)
        ok = ok and passed
    sys.exit(0 if ok else 1)
