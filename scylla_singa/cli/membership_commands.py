"""`scylla-singa cluster init|join|token|leave` (and the hidden `supervise`): a cluster on your machines."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from scylla_singa.cluster import first_machine, joining, leaving, member_guard, member_status, supervisor
from scylla_singa.cluster.first_machine import InitOptions
from scylla_singa.cluster.member_state import FIRST, load_member
from scylla_singa.cluster.membership import AgentOptions, MembershipError
from .param_types import Duration

FIRST_PORTS = ("5050/tcp (master; 5060, 5070 for masters 2 and 3)", "2377/tcp (swarm manager)")
EVERY_PORTS = ("5051/tcp (agent)", "7946/tcp+udp (swarm gossip)", "4789/udp (job overlays, VXLAN)")
ZK_PORTS = ("2181/tcp (ZooKeeper)",)
HDFS_PORTS = ("8020/tcp, 9870/tcp (HDFS NameNode, WebHDFS)", "9864/tcp, 9866/tcp, 9867/tcp (HDFS DataNode)")


def _agent_options(fn):
    for opt in reversed([
        click.option("--resources", default=None, metavar="SPEC",
                     help="What the agent offers, e.g. 'cpus:8;mem:28000;disk:90000' [default: measured: all CPUs, "
                          "memory less max(1 GB, 10%), 90% of the free disk, GPUs, the link speed as net_bw]."),
        click.option("--net-bw", "net_bw", type=click.IntRange(min=1), default=None, metavar="MBIT",
                     help="Network bandwidth to offer (Mbit/s) [default: the cluster interface's link speed]."),
        click.option("--attributes", default=None, metavar="K:V;...",
                     help="Attributes besides host:<hostname>, e.g. 'rack:r1;zone:a' (placement policies read them)."),
        click.option("--supervisor", "supervisor_kind", type=click.Choice(["auto", "systemd", "process"]),
                     default="auto", show_default=True,
                     help="What keeps the agent (and masters) running: systemd units (restarted after a crash and a "
                          "reboot), or a supervisor process (restarted after a crash; not after a reboot). auto: "
                          "systemd when the machine runs it."),
    ]):
        fn = opt(fn)
    return fn


def _fail(exc: Exception) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(1)


def _require_root() -> None:
    if os.geteuid() != 0:
        _fail(MembershipError("this command needs root (it joins the Docker engine to a swarm and installs a "
                              "supervised service)"))


def _print_ports(zk: bool, hdfs: bool) -> None:
    click.echo("\nOpen these ports to the cluster's machines only (never to the internet):")
    click.echo("  on this machine:  " + "; ".join([*FIRST_PORTS, *(ZK_PORTS if zk else ()),
                                                   *(HDFS_PORTS if hdfs else ()), *EVERY_PORTS]))
    click.echo("  on every machine: " + "; ".join(EVERY_PORTS))
    click.echo("  where `run` runs:  its --api-port (the jobs' containers report progress there)")


@click.command("init")
@click.option("--zk", is_flag=True,
              help="Start Apache ZooKeeper here (masters elect through it; SINGA jobs meet in it).")
@click.option("--hdfs", is_flag=True, help="Start Apache HDFS here (job files reach every machine through it).")
@click.option("--masters", default=1, show_default=True, type=click.IntRange(1, 5),
              help="Masters on this machine (ports 5050, 5060, ...); more than one needs --zk.")
@click.option("--advertise-addr", "advertise", default=None, metavar="IP",
              help="The address other machines reach this one at [default: the default route's].")
@click.option("--name", "cluster_name", default="scylla", show_default=True, help="The cluster's name (in tokens).")
@click.option("--no-agent", is_flag=True, help="Run no agent here (a machine for masters and services only).")
@click.option("--token-ttl", default="24h", show_default=True, type=Duration(),
              help="How long the printed join token is accepted by `cluster join`.")
@_agent_options
def init_cmd(zk: bool, hdfs: bool, masters: int, advertise: str | None, cluster_name: str, no_agent: bool,
             token_ttl: float, resources: str | None, net_bw: int | None, attributes: str | None,
             supervisor_kind: str) -> None:
    """Make this machine the first of a new cluster.

    It becomes the Docker Swarm manager, runs the master(s) with newly made
    credentials, the services asked for, and an agent; then prints the
    `scylla-singa cluster join` line to run on every other machine.

    \b
      scylla-singa cluster init --zk --hdfs
    Needs root. What it changes is listed in the README ("A cluster on your VMs")."""
    _require_root()
    opts = InitOptions(cluster=cluster_name, zk=zk, hdfs=hdfs, masters=masters, advertise=advertise,
                       agent=not no_agent, token_ttl_s=token_ttl,
                       agent_options=AgentOptions(resources, net_bw, attributes, supervisor_kind))
    try:
        state, line = first_machine.init(opts, echo=click.echo)
    except MembershipError as exc:
        _fail(exc)
    click.echo(f"cluster {state.cluster!r} initialised on {state.address}: master {state.master}")
    click.echo(f"\nOn each other machine, run (the token is a password; it expires in {token_ttl / 3600:g} h):\n")
    click.echo(f"  {line}")
    click.echo("\n(or keep it out of `ps`: put the token in a file and use --token-file FILE)")
    _print_ports(zk, hdfs)


@click.command("join")
@click.argument("first", metavar="ADDR")
@click.option("--token", "token_text", default=None, envvar="SCYLLA_JOIN_TOKEN",
              help="The token `cluster init` (or `cluster token`) printed [env: SCYLLA_JOIN_TOKEN].")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read the token from this file instead (keeps it off the command line).")
@click.option("--advertise-addr", "advertise", default=None, metavar="IP",
              help="This machine's address for the others [default: the one it reaches ADDR from].")
@_agent_options
def join_cmd(first: str, token_text: str | None, token_file: Path | None, advertise: str | None,
             resources: str | None, net_bw: int | None, attributes: str | None, supervisor_kind: str) -> None:
    """Join this machine to the cluster whose first machine's master is at ADDR (host[:5050]).

    Checks the token with the master before it changes anything, joins the
    swarm, measures the machine and starts a supervised agent offering it.

    \b
      scylla-singa cluster join --token scylla-join1.... 10.0.0.1:5050
    Needs root and the README's setup done on this machine."""
    _require_root()
    if token_file is not None:
        try:
            token_text = token_file.read_text()
        except OSError as exc:
            _fail(MembershipError(f"--token-file {token_file}: {exc.strerror or exc}"))
    if not token_text:
        _fail(MembershipError("give the join token: --token T, --token-file FILE or SCYLLA_JOIN_TOKEN; on the first "
                              "machine, `scylla-singa cluster token` prints one"))
    try:
        token = joining.read_token(token_text or "")
        state = joining.join(token, first, advertise, AgentOptions(resources, net_bw, attributes,
                                                                        supervisor_kind), echo=click.echo)
    except MembershipError as exc:
        _fail(exc)
    click.echo(f"joined cluster {state.cluster!r} as {state.agent_hostname} ({state.address}); "
               "`scylla-singa cluster status` lists its machines")


@click.command("token")
@click.option("--ttl", default="24h", show_default=True, type=Duration(), help="How long `cluster join` accepts it.")
@click.option("--rotate", is_flag=True, help="Also rotate the swarm's join token: every token made before stops "
                                             "joining machines (machines already joined stay).")
def token_cmd(ttl: float, rotate: bool) -> None:
    """Print a new `scylla-singa cluster join` line (on the first machine)."""
    try:
        state = load_member()
        if state is None:
            raise MembershipError("this machine is not a member of a cluster; `scylla-singa cluster init` makes one")
        click.echo(first_machine.join_line(state, ttl_s=ttl, rotate=rotate))
    except (MembershipError, ValueError) as exc:
        _fail(exc)


@click.command("leave")
@click.option("--force", is_flag=True, help="On the first machine: stop the cluster even though other machines are "
                                            "still members; anywhere: go on when the master cannot be reached.")
@click.option("--drain-timeout", default="5m", show_default=True, type=Duration(),
              help="How long to wait for the agent's tasks to end after draining.")
@click.option("--keep-data", is_flag=True, help="Keep $SCYLLA_HOME/machine (credentials, masters' and services' "
                                                "data, sandboxes); only the membership record goes.")
def leave_cmd(force: bool, drain_timeout: float, keep_data: bool) -> None:
    """Take this machine out of its cluster: drain its agent (no new offers;
    its tasks are killed, so their jobs restart them on other machines), stop
    it, leave the swarm, and remove what init/join made. On the first machine
    this stops the masters and services too: leave the others first."""
    _require_root()
    try:
        problems = leaving.leave(force=force, keep_data=keep_data, drain_timeout_s=drain_timeout, echo=click.echo)
    except MembershipError as exc:
        _fail(exc)
    if problems:
        click.echo(f"left with {len(problems)} problem(s)", err=True)
        sys.exit(1)
    click.echo("left the cluster")


def show_member_status(as_json: bool) -> bool:
    """`cluster status` of a machine of init/join; False when this machine is not one."""
    try:
        state = load_member()
    except ValueError as exc:
        _fail(exc)
    if state is None:
        return False
    report = member_status.gather(state)
    if as_json:
        click.echo(json.dumps(report, indent=1))
    else:
        where = "first machine" if state.role == FIRST else "member"
        click.echo(f"cluster {report['cluster']!r} ({report['status']}), this machine: {where} {report['address']}")
        click.echo(f"  master {report['master']}" + (f", webhdfs {report['webhdfs']}" if report["webhdfs"] else "")
                   + (f", zookeeper {report['zk_hosts']}" if report["zk_hosts"] else ""))
        for m in report["machines"]:
            click.echo(f"  {m['name']:<16} {m['address']:<15} {m['role']:<36} {m['health']:<10} {m['detail']}")
        for e in report["errors"]:
            click.echo(f"  problem: {e}")
    if report["errors"] or any(m["health"] != "ok" for m in report["machines"]):
        sys.exit(3)
    return True


@click.command("guard", hidden=True)
@click.option("--ports", required=True, help="Comma-separated TCP ports to keep to the swarm's machines.")
def guard_cmd(ports: str) -> None:
    """Keep PORTS to this machine and the swarm's nodes, following the swarm (what `init` supervises)."""
    try:
        numbers = [int(p) for p in ports.split(",") if p]
    except ValueError:
        raise click.BadParameter(f"{ports!r}: expected ports like 2181,9870", param_hint="--ports") from None
    sys.exit(member_guard.run_guard(numbers))


@click.command("supervise", hidden=True)
@click.option("--name", required=True)
@click.option("--pidfile", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--log", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.argument("argv", nargs=-1, required=True)
def supervise_cmd(name: str, pidfile: Path, log: Path, argv: tuple[str, ...]) -> None:
    """Run ARGV, restarting it whenever it exits, until SIGTERM (what `join` uses without systemd)."""
    sys.exit(supervisor.supervise(name, list(argv), pidfile, log))
