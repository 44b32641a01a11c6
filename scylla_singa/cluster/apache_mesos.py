"""Real Apache Mesos masters and agents, started on this machine (prototype, issue 13 phase 1).

Why: the framework must run on the cluster manager its users run, not only on
our Mesos-compatible master and agent. This module starts `mesos-master` and
`mesos-agent` from a Mesos install (`tools/ensure_mesos.sh` unpacks one and
prints its home) in two places:

- `local`: one master and one agent on 127.0.0.1, free ports, on this
  machine's Docker engine (the quickest real cluster, for `run --master`);
- `cluster`: next to a cluster-in-a-box made with `scylla-singa cluster up
  --no-agents --zk` (its namespaces, node engines, swarm and ZooKeeper):
  masters in namespaces of their own on the cluster LAN (ZooKeeper leader
  election, replicated log, `--quorum` = majority) and one agent per node
  namespace on that node's own Docker engine.

Contracts: command lines are built by pure functions (`master_argv`,
`agent_argv`); every agent gets `--docker_kill_orphans=false` (otherwise an
agent kills every `mesos-*` container of its engine at start, including
another agent's) and work, runtime, fetcher-cache and store directories of
its own; a process is stopped only by the pid (and start time) we recorded.
Not wired into `cluster up` yet: that waits for the package's new layout.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from scylla_singa.common.waiting import wait_until

from . import launcher, netns
from .config import ClusterConfig

MASTER_PORT = 5050
AGENT_PORT = 5051
ROOT = Path(__file__).resolve().parents[2]


class MesosError(RuntimeError):
    """A Mesos install is missing or a daemon did not come up; the message says what to do."""


# -- the install --------------------------------------------------------------
@dataclass(frozen=True)
class MesosInstall:
    """An unpacked Mesos: bin/mesos-master, bin/mesos-agent and libexec/ (executors, fetcher)."""

    home: Path

    @property
    def master(self) -> str:
        return str(self.home / "bin" / "mesos-master")

    @property
    def agent(self) -> str:
        return str(self.home / "bin" / "mesos-agent")

    @property
    def libexec(self) -> str:
        return str(self.home / "libexec")

    def version(self) -> str:
        out = subprocess.run([self.master, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or out.stderr.strip()


def find_install(home: str | None = None) -> MesosInstall:
    """`home`, else $MESOS_HOME, else what tools/ensure_mesos.sh unpacked (running it, idempotent)."""
    chosen = home or os.environ.get("MESOS_HOME")
    if not chosen:
        script = ROOT / "tools" / "ensure_mesos.sh"
        proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise MesosError(f"no Mesos install: {script} failed: {proc.stderr.strip()[-500:]}")
        chosen = proc.stdout.strip().splitlines()[-1]
    install = MesosInstall(Path(chosen))
    if not (os.access(install.master, os.X_OK) and os.access(install.agent, os.X_OK)):
        raise MesosError(f"{chosen} is not a Mesos install (no bin/mesos-master, bin/mesos-agent); "
                         "give --mesos-home or MESOS_HOME, or run tools/ensure_mesos.sh")
    return install


# -- command lines (pure) -----------------------------------------------------
def master_argv(install: MesosInstall, ip: str, port: int, work_dir: str, log_dir: str,
                zk: str | None = None, quorum: int = 1, hostname: str | None = None,
                extra: dict[str, str] | None = None) -> list[str]:
    """A mesos-master command line. With `zk` it contends for leadership there and keeps its
    registry in a replicated log of `quorum` out of 2*quorum-1 masters; without, in memory."""
    flags = {"ip": ip, "port": str(port), "hostname": hostname or ip, "work_dir": work_dir, "log_dir": log_dir,
             "logbufsecs": "0"}
    if zk:
        flags.update({"zk": zk, "quorum": str(quorum), "registry": "replicated_log"})
    else:
        flags["registry"] = "in_memory"
    flags.update(extra or {})
    return [install.master, *(f"--{k}={v}" for k, v in flags.items())]


def agent_argv(install: MesosInstall, master: str, ip: str, port: int, hostname: str, work_dir: str,
               resources: str, docker_socket: str = "/var/run/docker.sock", attributes: str | None = None,
               extra: dict[str, str] | None = None) -> list[str]:
    """A mesos-agent command line running Docker tasks on the engine at `docker_socket`.

    Everything it keeps on disk lives under `work_dir` (runtime dir, fetcher
    cache, image stores, logs), so two agents on one machine never share state.
    """
    w = Path(work_dir)
    flags = {
        "master": master, "ip": ip, "port": str(port), "hostname": hostname,
        "work_dir": str(w / "work"), "runtime_dir": str(w / "run"), "log_dir": str(w / "logs"),
        "fetcher_cache_dir": str(w / "fetch"), "docker_store_dir": str(w / "store" / "docker"),
        "appc_store_dir": str(w / "store" / "appc"), "logbufsecs": "0",
        "containerizers": "docker,mesos", "launcher": "posix", "isolation": "posix/cpu,posix/mem",
        "launcher_dir": install.libexec, "docker": "docker", "docker_socket": docker_socket,
        "resources": resources,
        # Exited task containers stay on the engine this long (Mesos's default is 6 hours).
        "docker_remove_delay": "1mins",
        "executor_registration_timeout": "2mins",
    }
    if attributes:
        flags["attributes"] = attributes
    flags.update(extra or {})
    flags["docker_kill_orphans"] = "false"  # never negotiable: see the module docstring
    return [install.agent, *(f"--{k}={v}" for k, v in flags.items()), "--no-systemd_enable_support"]


# -- processes ----------------------------------------------------------------
def start(name: str, argv: list[str], log: str, ready_url: str, netns_name: str | None = None,
          timeout_s: float = 60) -> dict[str, Any]:
    """Start `argv` (inside `netns_name` when given), wait until `ready_url` answers 200.

    Returns {pid, start, argv, log}; MesosError with the log's end if it exits or never answers.
    """
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    prefix = ["nsenter", f"--net={netns.netns_path(netns_name)}"] if netns_name else []
    with open(log, "ab") as out:
        proc = subprocess.Popen([*prefix, *argv], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    facts = {"name": name, "pid": proc.pid, "start": launcher.start_time(proc.pid), "argv": argv, "log": log}
    try:
        wait_until(lambda: answers(ready_url) or proc.poll() is not None, timeout_s, f"{name} at {ready_url}")
    except TimeoutError as exc:
        launcher.stop(**facts)
        raise MesosError(f"{exc}; its log ends:\n{tail(log)}") from None
    if proc.poll() is not None:
        raise MesosError(f"{name} exited with {proc.returncode}; its log ends:\n{tail(log)}")
    return facts


def answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def tail(path: str, lines: int = 20) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def shut_down_agent(facts: dict[str, Any], timeout_s: float = 60) -> None:
    """SIGUSR1 a mesos-agent we started, wait until it has shut its executors down and exited, then
    remove the task containers it leaves on its engine (their removal timers die with it)."""
    pid, started = facts["pid"], facts["start"]
    if not launcher.running(pid, started):
        return
    containers = agent_containers(facts["address"])
    os.kill(pid, signal.SIGUSR1)
    try:
        wait_until(lambda: not launcher.running(pid, started), timeout_s, f"{facts['name']} to shut down")
    except TimeoutError:
        launcher.stop(pid, started)
    remove_containers(flag_of(facts["argv"], "docker_socket"), containers)


def agent_containers(address: str) -> list[str]:
    """Docker names of the containers an agent ran (Mesos names them mesos-<container id>)."""
    try:
        state = requests.get(f"http://{address}/state", timeout=10).json()
    except (requests.RequestException, ValueError):
        return []
    return [f"mesos-{ex['container']}" for fw in state.get("frameworks", []) + state.get("completed_frameworks", [])
            for ex in fw.get("executors", []) + fw.get("completed_executors", []) if ex.get("container")]


def remove_containers(docker_socket: str | None, names: list[str]) -> None:
    if not docker_socket or not names:
        return
    client = docker.DockerClient(base_url=f"unix://{docker_socket}", timeout=60)
    try:
        for name in names:
            try:
                client.containers.get(name).remove(force=True)
            except docker.errors.NotFound:
                pass
    finally:
        client.close()


def flag_of(argv: list[str], name: str) -> str | None:
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), None)


# -- what a running master says -------------------------------------------------
def is_leader(address: str) -> bool:
    """True when the master at host:port says it is the elected leader."""
    try:
        snap = requests.get(f"http://{address}/metrics/snapshot", timeout=2).json()
    except (requests.RequestException, ValueError):
        return False
    return snap.get("master/elected") == 1.0


def leader_of(addresses: list[str]) -> str | None:
    return next((a for a in addresses if is_leader(a)), None)


def registered_agents(address: str) -> list[dict[str, Any]]:
    try:
        return [s for s in requests.get(f"http://{address}/master/slaves", timeout=5).json().get("slaves", [])
                if s.get("active")]
    except (requests.RequestException, ValueError):
        return []


# -- a set of daemons ---------------------------------------------------------
@dataclass
class MesosCluster:
    """What was started, for stopping it again (and for a state file other tools read)."""

    masters: list[dict[str, Any]] = field(default_factory=list)   # facts + "address"
    agents: list[dict[str, Any]] = field(default_factory=list)    # facts + "address"
    namespaces: list[dict[str, str]] = field(default_factory=list)  # {"netns", "veth"} we created
    zk: str | None = None

    @property
    def master(self) -> str:
        """What `scylla-singa run --master` takes: the zk:// URL, else the one master."""
        return self.zk or self.masters[0]["address"]

    def addresses(self) -> list[str]:
        return [m["address"] for m in self.masters]

    def to_dict(self) -> dict[str, Any]:
        return {"master": self.master, "zk": self.zk, "masters": self.masters, "agents": self.agents,
                "namespaces": self.namespaces}

    def stop(self) -> None:
        """Agents first, then masters, then the namespaces we made; idempotent.

        An agent is sent SIGUSR1, on which Mesos shuts its executors down (their containers go)
        and unregisters; on SIGTERM it would exit and leave them running.
        """
        for facts in self.agents:
            shut_down_agent(facts)
        for facts in self.masters:
            launcher.stop(facts["pid"], facts["start"])
        for ns in self.namespaces:
            netns.delete_link(ns["veth"])
            netns.delete_netns(ns["netns"])


def up_local(install: MesosInstall, directory: str, resources: str = "cpus:4;mem:8192") -> MesosCluster:
    """One master and one agent on 127.0.0.1 (free ports), on this machine's Docker engine."""
    d = Path(directory)
    cluster = MesosCluster()
    mport, aport = free_port(), free_port()
    argv = master_argv(install, "127.0.0.1", mport, str(d / "master" / "work"), str(d / "master" / "logs"))
    cluster.masters.append({**start("mesos-master", argv, str(d / "master.log"),
                                    f"http://127.0.0.1:{mport}/health"), "address": f"127.0.0.1:{mport}"})
    try:
        argv = agent_argv(install, f"127.0.0.1:{mport}", "127.0.0.1", aport, "127.0.0.1", str(d / "agent"),
                          resources)
        cluster.agents.append({**start("mesos-agent", argv, str(d / "agent.log"),
                                       f"http://127.0.0.1:{aport}/health"), "address": f"127.0.0.1:{aport}"})
        wait_until(lambda: registered_agents(f"127.0.0.1:{mport}"), 60, "the agent to register")
    except (MesosError, TimeoutError):
        cluster.stop()
        raise
    return cluster


def master_host(config: ClusterConfig, j: int) -> tuple[str, str, str]:
    """(namespace, host-side veth, address) of real master j: .20+j on the cluster LAN, clear of
    the cluster's own masters (.11-.15) and nodes (.101+)."""
    base = config.host_address.rsplit(".", 1)[0]
    return f"{config.prefix}-amaster{j}", f"{config.prefix}-am{j}", f"{base}.{20 + j}"


def up_in_cluster(install: MesosInstall, config: ClusterConfig, masters: int, directory: str,
                  resources: str | None = None) -> MesosCluster:
    """Real masters (namespaces of their own) and one real agent per node of a running cluster-in-a-box.

    The cluster must have been made with `--no-agents` (its nodes' port 5051 is ours) and, for more
    than one master, `--zk`. Agents run in their node's namespace on its address and Docker engine.
    """
    if masters > 1 and not config.zk:
        raise MesosError(f"{masters} masters need ZooKeeper to elect a leader: bring the cluster up with --zk")
    d = Path(directory)
    cluster = MesosCluster(zk=config.zk_url)
    quorum = masters // 2 + 1
    try:
        for j in range(1, masters + 1):
            ns, veth, address = master_host(config, j)
            netns.create_netns(ns)
            cluster.namespaces.append({"netns": ns, "veth": veth})
            netns.create_veth(veth, ns, config.bridge, f"{address}/{config.prefixlen}", config.host_address)
            argv = master_argv(install, address, MASTER_PORT, str(d / ns / "work"), str(d / ns / "logs"),
                               zk=config.zk_url, quorum=quorum)
            facts = start(f"mesos-master {ns}", argv, str(d / f"{ns}.log"),
                          f"http://{address}:{MASTER_PORT}/health", netns_name=ns)
            cluster.masters.append({**facts, "address": f"{address}:{MASTER_PORT}", "netns": ns})
        wait_until(lambda: leader_of(cluster.addresses()), 90, "a leading master")
        for spec in config.node_specs():
            argv = agent_argv(install, cluster.master, spec.address, AGENT_PORT, spec.name,
                              str(d / spec.name), resources or config.resources_of(spec.index),
                              docker_socket=spec.socket, attributes=f"host:{spec.name}")
            facts = start(f"mesos-agent {spec.name}", argv, str(d / f"{spec.name}-agent.log"),
                          f"http://{spec.address}:{AGENT_PORT}/health", netns_name=spec.name)
            cluster.agents.append({**facts, "address": f"{spec.address}:{AGENT_PORT}", "netns": spec.name})
        wait_until(lambda: len(registered_agents(leader_of(cluster.addresses()) or "")) == len(cluster.agents),
                 120, "every agent to register with the leader")
    except (MesosError, TimeoutError, OSError):
        cluster.stop()
        raise
    return cluster


def restart_master(cluster: MesosCluster, index: int) -> dict[str, Any]:
    """Start master `index` (0-based) again with its recorded command line, in its namespace."""
    old = cluster.masters[index]
    facts = start(old["name"], old["argv"], old["log"], f"http://{old['address']}/health",
                  netns_name=old.get("netns"))
    cluster.masters[index] = {**old, **facts}
    return cluster.masters[index]


def save(cluster: MesosCluster, path: str) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(cluster.to_dict(), indent=1) + "\n")
    os.replace(tmp, path)


def load(path: str) -> MesosCluster:
    d = json.loads(Path(path).read_text())
    return MesosCluster(masters=d["masters"], agents=d["agents"], namespaces=d["namespaces"], zk=d.get("zk"))


def measure_failover(cluster: MesosCluster, timeout_s: float = 120) -> dict[str, float | str]:
    """SIGKILL the leading master; seconds until another master leads and until every agent is
    registered with it again. The killed master is not restarted."""
    leader = leader_of(cluster.addresses())
    if leader is None:
        raise MesosError("no master leads right now")
    victim = next(m for m in cluster.masters if m["address"] == leader)
    t0 = time.monotonic()
    os.kill(victim["pid"], signal.SIGKILL)
    others = [a for a in cluster.addresses() if a != leader]
    found: list[str] = []

    def another_leads() -> bool:
        found[:] = [a for a in others if is_leader(a)]
        return bool(found)
    wait_until(another_leads, timeout_s, "another master to lead", interval_s=0.1)
    new, elected = found[0], time.monotonic() - t0
    wait_until(lambda: len(registered_agents(new)) == len(cluster.agents), timeout_s,
             "every agent to re-register with the new leader")
    return {"killed": leader, "new_leader": new, "elected_s": round(elected, 2),
            "agents_back_s": round(time.monotonic() - t0, 2)}
