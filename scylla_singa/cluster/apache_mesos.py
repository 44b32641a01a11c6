"""Real Apache Mesos masters and agents: the one place that builds their command lines and starts them.

Why: the framework must run on the cluster manager its users run, not only on
our Mesos-compatible master and agent. `cluster up --mesos apache` starts
`mesos-master` and `mesos-agent` from a Mesos install (`tools/ensure_mesos.sh`
unpacks one and prints its home) in the cluster's namespaces; `local_mesos`
starts one master and one agent on 127.0.0.1 (tests, a quick real cluster);
the protobuf tests start theirs here too.

Contracts:
- command lines are built by pure functions (`master_argv`, `agent_argv`);
- every agent gets `--docker_kill_orphans=false`, whatever it is asked:
  otherwise an agent kills every `mesos-*` container of its engine at start,
  another agent's too (several agents share engines on this machine);
- every agent keeps all it writes (work, runtime, fetcher cache, image
  stores, logs) under its own directory: Mesos's defaults (/var/run/mesos,
  /tmp/mesos) are shared by every agent of a machine;
- a daemon is stopped only by the pid and start time we recorded; an agent
  is shut down with SIGUSR1 (it kills its executors and unregisters; on
  SIGTERM it would leave them running), and the exited task containers it
  leaves behind are removed by name.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from scylla_singa.common.waiting import wait_until
from scylla_singa.mesos.api.credentials import FRAMEWORK_PRINCIPAL, Credential, load_credentials

from . import launcher, netns

MASTER_PORT = 5050
AGENT_PORT = 5051
ROOT = Path(__file__).resolve().parents[2]
# Exited task containers stay on the engine this long (Mesos's default is 6 hours; the task's
# output is in its sandbox, not in the container).
DOCKER_REMOVE_DELAY = "10secs"


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
    """`home`, else $MESOS_HOME, else what tools/ensure_mesos.sh unpacked (running it, idempotent).

    Raises MesosError naming what to give when none is usable.
    """
    chosen = home or os.environ.get("MESOS_HOME")
    if not chosen:
        script = ROOT / "tools" / "ensure_mesos.sh"
        if not script.is_file():
            raise MesosError("no Mesos install: give --mesos-home DIR (the directory holding bin/mesos-master) "
                             "or set MESOS_HOME")
        proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise MesosError(f"no Mesos install: {script} failed: {proc.stderr.strip()[-500:]}")
        chosen = proc.stdout.strip().splitlines()[-1]
    install = MesosInstall(Path(chosen).resolve())
    if not (os.access(install.master, os.X_OK) and os.access(install.agent, os.X_OK)):
        raise MesosError(f"{chosen} is not a Mesos install (no bin/mesos-master, bin/mesos-agent); "
                         "give --mesos-home or MESOS_HOME, or run tools/ensure_mesos.sh")
    return install


# -- command lines (pure) -----------------------------------------------------
def master_argv(install: MesosInstall, ip: str, port: int, work_dir: str, log_dir: str,
                zk: str | None = None, quorum: int = 1, hostname: str | None = None,
                extra: dict[str, str] | None = None) -> list[str]:
    """A mesos-master command line. With `zk` it contends for leadership there and keeps its
    registry in a replicated log needing `quorum` replicas (a majority of the masters); without,
    in memory."""
    flags = {"ip": ip, "port": str(port), "hostname": hostname or ip, "work_dir": work_dir, "log_dir": log_dir,
             "logbufsecs": "0"}
    if zk:
        flags.update({"zk": zk, "quorum": str(quorum), "registry": "replicated_log"})
    else:
        flags["registry"] = "in_memory"
    flags.update(extra or {})
    return [install.master, *(f"--{k}={v}" for k, v in flags.items())]


def agent_timeout_flags(seconds: float | None) -> dict[str, str]:
    """Masters' flags marking an agent unreachable after `seconds` of silence: a ping every fifth
    of it, five missed (Mesos's defaults: 15 s x 5). Mesos's `agent_reregister_timeout` cannot go
    below 10 minutes, so it keeps its default."""
    if seconds is None:
        return {}
    return {"agent_ping_timeout": f"{seconds / 5 * 1000:g}ms", "max_agent_ping_timeouts": "5"}


def master_auth_flags(credentials_file: str) -> dict[str, str]:
    """A mesos-master's flags for what our own master does by default: frameworks (HTTP Basic), agents
    (SASL CRAM-MD5, libsasl2-modules) and every HTTP endpoint authenticated against one credentials file."""
    return {"credentials": credentials_file, "authenticate_frameworks": "true",
            "authenticate_http_frameworks": "true", "http_framework_authenticators": "basic",
            "authenticate_agents": "true", "authenticate_http_readonly": "true",
            "authenticate_http_readwrite": "true"}


def agent_auth_flags(credential_file: str, http_credentials_file: str) -> dict[str, str]:
    """A mesos-agent's flags: it proves itself to the master with `credential_file`; callers of its HTTP
    endpoints (the framework reading sandboxes, the operator) prove themselves against the credentials."""
    return {"credential": credential_file, "http_credentials": http_credentials_file,
            "authenticate_http_readonly": "true", "authenticate_http_readwrite": "true"}


def agent_argv(install: MesosInstall, master: str, ip: str, port: int, hostname: str, work_dir: str,
               resources: str, docker_socket: str | None = "/var/run/docker.sock", attributes: str | None = None,
               extra: dict[str, str] | None = None) -> list[str]:
    """A mesos-agent command line: Docker tasks on the engine at `docker_socket` (None: the Mesos
    containerizer only, commands as processes, no engine touched).

    Everything it keeps on disk lives under `work_dir`, so two agents on one machine share nothing.
    """
    w = Path(work_dir)
    flags = {
        "master": master, "ip": ip, "port": str(port), "hostname": hostname,
        "work_dir": str(w / "work"), "runtime_dir": str(w / "run"), "log_dir": str(w / "logs"),
        "fetcher_cache_dir": str(w / "fetch"), "docker_store_dir": str(w / "store" / "docker"),
        "appc_store_dir": str(w / "store" / "appc"), "logbufsecs": "0",
        "containerizers": "mesos", "launcher": "posix", "isolation": "posix/cpu,posix/mem",
        "launcher_dir": install.libexec, "resources": resources,
    }
    if docker_socket:
        flags.update({"containerizers": "docker,mesos", "docker": "docker", "docker_socket": docker_socket,
                      "docker_remove_delay": DOCKER_REMOVE_DELAY, "executor_registration_timeout": "2mins"})
    if attributes:
        flags["attributes"] = attributes
    flags.update(extra or {})
    flags["docker_kill_orphans"] = "false"  # never negotiable: see the module docstring
    return [install.agent, *(f"--{k}={v}" for k, v in flags.items()), "--no-systemd_enable_support"]


def flag_of(argv: list[str], name: str) -> str | None:
    """The value of `--name=value` in a command line, or None."""
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), None)


# -- processes ----------------------------------------------------------------
@dataclass
class MesosDaemon:
    """A mesos-master or mesos-agent we started: what stops it again (also as a state file's facts)."""

    name: str
    pid: int
    start: str | None      # start time in clock ticks: tells our process from a reused pid
    argv: list[str]
    log: str
    address: str           # host:port

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def running(self) -> bool:
        return launcher.running(self.pid, self.start)

    def stop(self) -> None:
        """An agent is shut down (its executors and containers go), a master terminated; idempotent."""
        if Path(self.argv[0]).name == "mesos-agent":
            shut_down_agent(self)
        else:
            stop_master(self)

    def facts(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_facts(cls, facts: dict[str, Any]) -> "MesosDaemon":
        return cls(**{k: facts[k] for k in cls.__dataclass_fields__})


def start(name: str, argv: list[str], log: str, address: str, netns_name: str | None = None,
          timeout_s: float = 60) -> MesosDaemon:
    """Start `argv` (inside network namespace `netns_name` when given) and wait until its /health
    at `address` answers 200. MesosError with the log's end if it exits or never answers."""
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    prefix = ["nsenter", f"--net={netns.netns_path(netns_name)}"] if netns_name else []
    with open(log, "ab") as out:
        proc = subprocess.Popen([*prefix, *argv], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    daemon = MesosDaemon(name, proc.pid, launcher.start_time(proc.pid), argv, log, address)
    try:
        wait_until(lambda: answers(f"http://{address}/health") or proc.poll() is not None, timeout_s,
                   f"{name} at {address}")
    except TimeoutError as exc:
        launcher.stop(daemon.pid, daemon.start)
        raise MesosError(f"{exc}; its log ends:\n{tail(log)}") from None
    if proc.poll() is not None:
        raise MesosError(f"{name} exited with {proc.returncode}; its log ends:\n{tail(log)}")
    return daemon


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


def stop_master(daemon: MesosDaemon) -> None:
    """SIGTERM (then SIGKILL) a master we started; idempotent."""
    launcher.stop(daemon.pid, daemon.start)


def shut_down_agent(daemon: MesosDaemon, timeout_s: float = 60) -> None:
    """SIGUSR1 an agent we started, wait until it has shut its executors down and exited, then
    remove the task containers it leaves on its engine (their removal timers die with it); idempotent."""
    if not daemon.running():
        return
    containers = agent_containers(daemon.address, http_credential(daemon.argv))
    os.kill(daemon.pid, signal.SIGUSR1)
    try:
        wait_until(lambda: not daemon.running(), timeout_s, f"{daemon.name} to shut down")
    except TimeoutError:
        launcher.stop(daemon.pid, daemon.start)
    remove_containers(flag_of(daemon.argv, "docker_socket"), containers)


def http_credential(argv: list[str]) -> Credential | None:
    """A credential the daemon of `argv` accepts on its HTTP endpoints (from its --http_credentials or
    --credentials file); None when it asks none."""
    path = flag_of(argv, "http_credentials") or flag_of(argv, "credentials")
    if not path:
        return None
    known = load_credentials(Path(path))
    principal = FRAMEWORK_PRINCIPAL if FRAMEWORK_PRINCIPAL in known else next(iter(known))
    return Credential(principal, known[principal])


def agent_containers(address: str, credential: Credential | None = None) -> list[str]:
    """Docker names of the containers an agent ran (Mesos names them mesos-<container id>)."""
    try:
        state = requests.get(f"http://{address}/state", timeout=10,
                             headers=credential.headers() if credential else None).json()
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
            except docker.errors.APIError as exc:  # removal already in progress
                if exc.status_code != 409:
                    raise
    finally:
        client.close()


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


# -- one master and one agent on this machine ------------------------------------
@dataclass
class LocalMesos:
    """A master and an agent on 127.0.0.1 (free ports); `stop()` is idempotent."""

    master: MesosDaemon
    agent: MesosDaemon | None = None

    @property
    def master_address(self) -> str:
        return self.master.address

    def stop(self) -> None:
        if self.agent is not None:
            self.agent.stop()
        self.master.stop()

    def __enter__(self) -> "LocalMesos":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def local_mesos(install: MesosInstall, directory: str, resources: str = "cpus:4;mem:8192",
                docker_socket: str | None = "/var/run/docker.sock", attributes: str | None = None) -> LocalMesos:
    """Start a master and an agent on 127.0.0.1 and wait until the agent is registered.

    `docker_socket` None: an agent with the Mesos containerizer only (it never touches an engine).
    """
    d = Path(directory)
    mport = free_port()
    argv = master_argv(install, "127.0.0.1", mport, str(d / "master" / "work"), str(d / "master" / "logs"))
    local = LocalMesos(start("mesos-master", argv, str(d / "master.log"), f"127.0.0.1:{mport}"))
    try:
        aport = free_port()
        argv = agent_argv(install, local.master_address, "127.0.0.1", aport, "127.0.0.1", str(d / "agent"),
                          resources, docker_socket=docker_socket, attributes=attributes)
        local.agent = start("mesos-agent", argv, str(d / "agent.log"), f"127.0.0.1:{aport}")
        wait_until(lambda: registered_agents(local.master_address), 60, "the agent to register")
    except (MesosError, TimeoutError):
        local.stop()
        raise
    return local
