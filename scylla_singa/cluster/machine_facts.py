"""What a machine has to offer, measured when it joins (the reading is thin; the arithmetic is pure).

An agent offers what its machine has, minus what the machine itself needs:
the operating system, the Docker engine and the agent keep some memory and
disk. GPUs are counted from the NVIDIA device nodes. Network bandwidth is
the link speed of the interface that carries the machine's cluster address
(what the kernel reports; a virtual NIC may report none or a nominal
figure, so `--net-bw` overrides it).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

RESERVED_MEM_MB = 1024           # kept for the OS, dockerd and the agent itself
RESERVED_MEM_FRACTION = 0.10
RESERVED_DISK_FRACTION = 0.10


@dataclass(frozen=True)
class MachineFacts:
    hostname: str
    cpus: int
    mem_mb: int              # total
    disk_mb: int             # free space where the agent keeps sandboxes
    gpus: int
    link_mbps: int | None    # speed of the cluster interface, when the kernel knows it


def offered_resources(facts: MachineFacts, net_bw_mbps: int | None = None) -> str:
    """The agent's --resources for this machine (pure): e.g. 'cpus:8;mem:29491;disk:90000;net_bw:10000'."""
    mem = facts.mem_mb - max(RESERVED_MEM_MB, int(facts.mem_mb * RESERVED_MEM_FRACTION))
    disk = int(facts.disk_mb * (1 - RESERVED_DISK_FRACTION))
    parts = [f"cpus:{facts.cpus}", f"mem:{max(mem, 256)}", f"disk:{max(disk, 0)}"]
    if facts.gpus:
        parts.append(f"gpus:{facts.gpus}")
    bw = net_bw_mbps if net_bw_mbps is not None else facts.link_mbps
    if bw:
        parts.append(f"net_bw:{bw}")
    return ";".join(parts)


def measure(work_dir: Path, address: str) -> MachineFacts:
    """Read this machine's facts; `work_dir` is where the agent will keep sandboxes (it may not exist yet)."""
    probe = work_dir
    while not probe.exists():
        probe = probe.parent
    st = os.statvfs(probe)
    return MachineFacts(hostname=socket.gethostname(), cpus=len(os.sched_getaffinity(0)), mem_mb=_mem_total_mb(),
                        disk_mb=st.f_bavail * st.f_frsize // 2**20, gpus=_gpu_count(),
                        link_mbps=_link_speed(address))


def _mem_total_mb() -> int:
    text = Path("/proc/meminfo").read_text()
    found = re.search(r"^MemTotal:\s+(\d+) kB", text, re.M)
    return int(found.group(1)) // 1024 if found else 0


def _gpu_count() -> int:
    return sum(1 for p in Path("/dev").glob("nvidia*") if re.fullmatch(r"nvidia\d+", p.name))


def _link_speed(address: str) -> int | None:
    """Mbit/s of the interface holding `address` (in this network namespace), or None."""
    try:
        links = json.loads(subprocess.run(["ip", "-j", "addr", "show"], capture_output=True, text=True,
                                          timeout=10).stdout or "[]")
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None
    want = ipaddress.ip_address(address)
    for link in links:
        if any(ipaddress.ip_address(a.get("local", "0.0.0.0")) == want for a in link.get("addr_info", [])
               if a.get("family") == "inet"):
            try:
                speed = int(Path(f"/sys/class/net/{link['ifname']}/speed").read_text())
            except (OSError, ValueError):
                return None
            return speed if speed > 0 else None
    return None

