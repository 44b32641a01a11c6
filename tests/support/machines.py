"""Separate "machines" on one host, for `cluster init` / `cluster join` tests.

Each machine is a node of a bare cluster-in-a-box (`cluster up --machines`):
its own network namespace and address, its own Docker engine (outside any
swarm), and here its own hostname (a UTS namespace per command) and its own
SCYLLA_HOME, so nothing of the project's state is shared with another
machine or the host. A command runs "on" the machine the way a user's shell
on a VM would run it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import docker

from scylla_singa.cluster.config import NodeSpec
from scylla_singa.cluster.netns import netns_path, netns_pids

REPO = Path(__file__).resolve().parents[2]
ENGINE_PROCESSES = {"dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2", "docker-proxy"}


@dataclass(frozen=True)
class Machine:
    name: str          # its hostname, e.g. "vm1"
    node: NodeSpec     # its namespace, address and engine
    home: Path         # its SCYLLA_HOME

    @property
    def address(self) -> str:
        return self.node.address

    def argv(self, *args: str) -> list[str]:
        """`scylla-singa ARGS` as run on this machine."""
        return ["nsenter", f"--net={netns_path(self.node.name)}", "unshare", "--uts", "--",
                "sh", "-c", 'hostname "$0" && exec "$@"', self.name,
                "env", f"DOCKER_HOST={self.node.docker_host}", f"SCYLLA_HOME={self.home}", "PYTHONUNBUFFERED=1",
                sys.executable, "-m", "scylla_singa", *args]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*args), cwd=REPO, capture_output=True, text=True, timeout=timeout)

    def run_line(self, line: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """A command line as printed for a user (`scylla-singa cluster join --token ... ADDR`)."""
        words = shlex.split(line)
        assert words[0] == "scylla-singa", line
        return self.run(*words[1:], timeout=timeout)

    def start(self, out: Path, *args: str) -> subprocess.Popen:
        """In the background; stdout to `out`, stderr to `out`.err."""
        with open(out, "w") as o, open(out.with_suffix(".err"), "w") as e:
            return subprocess.Popen(self.argv(*args), cwd=REPO, stdout=o, stderr=e, text=True)

    def reaches(self, address: str, port: int, timeout_s: float = 3.0) -> bool:
        """Whether a TCP connection from this machine to address:port is accepted."""
        probe = (f"import socket; socket.create_connection(({address!r}, {port}), {timeout_s})")
        r = subprocess.run(["nsenter", f"--net={netns_path(self.node.name)}", sys.executable, "-c", probe],
                           capture_output=True, text=True, timeout=timeout_s + 30)
        return r.returncode == 0

    def iptables_rules(self) -> str:
        return subprocess.run(["nsenter", f"--net={netns_path(self.node.name)}", "iptables", "-w", "10", "-S"],
                              capture_output=True, text=True, timeout=60).stdout

    def engine(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.node.docker_host, timeout=120)

    def leftovers(self) -> list[str]:
        """What init/join (or a job) left on this machine: membership files, containers, networks beyond
        Docker's own, swarm membership, processes in its namespace other than its engine's."""
        left = []
        if (self.home / "machine").exists():
            left.append(f"{self.home / 'machine'}: {sorted(p.name for p in (self.home / 'machine').iterdir())}")
        c = self.engine()
        try:
            left += [f"container {x.name}" for x in c.containers.list(all=True)]
            left += [f"network {n.name}" for n in c.networks.list() if n.name not in ("bridge", "host", "none")]
            state = c.info().get("Swarm", {}).get("LocalNodeState")
            if state != "inactive":
                left.append(f"swarm membership ({state})")
        finally:
            c.close()
        left += [f"iptables: {line}" for line in self.iptables_rules().splitlines() if "SCYLLA" in line]
        for pid in netns_pids(self.node.name):
            try:
                comm = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if comm not in ENGINE_PROCESSES:
                left.append(f"process {pid} {comm}: {Path(f'/proc/{pid}/cmdline').read_bytes()[:200]!r}")
        return left
