"""cluster.json, written by the framework: where every process of the job listens.

    {"job": "<job-id>", "nprocs": N,
     "procs": [{"id": 0, "host": "<job-id>-proc-0", "port": 6723}, ...]}

Every id 0..N-1 appears exactly once, N is the job's number of processes,
`host` is a name or address peers can connect to (on the overlay, the
container's name) and `port` where that process binds its ZeroMQ ROUTER.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .runtime_errors import SingaConfigError


@dataclass(frozen=True)
class Peer:
    id: int
    host: str
    port: int

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class ClusterFile:
    job: str
    procs: tuple[Peer, ...]

    @property
    def nprocs(self) -> int:
        return len(self.procs)


def parse_cluster(text: str, expected_nprocs: int | None, source: str = "cluster.json") -> ClusterFile:
    """Parse and check cluster.json text (against the job's process count unless None).

    Raises SingaConfigError saying what is wrong. Stdlib only: the Apache SINGA
    image's task wrapper reads the same file with it.
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SingaConfigError(f"{source}: not JSON: {exc}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("procs"), list):
        raise SingaConfigError(f'{source}: expected an object with a "procs" list')
    peers = []
    for i, p in enumerate(raw["procs"]):
        try:
            peer = Peer(int(p["id"]), str(p["host"]), int(p["port"]))
        except (KeyError, TypeError, ValueError):
            raise SingaConfigError(f'{source}: procs[{i}] needs "id", "host" and "port"') from None
        if not peer.host or not 1 <= peer.port <= 65535:
            raise SingaConfigError(f"{source}: procs[{i}] has an empty host or a port outside 1-65535")
        peers.append(peer)
    ids = sorted(p.id for p in peers)
    if ids != list(range(len(peers))):
        raise SingaConfigError(f"{source}: process ids must be 0..{len(peers) - 1}, each once; got {ids}")
    if "nprocs" in raw and raw["nprocs"] != len(peers):
        raise SingaConfigError(f"{source}: nprocs is {raw['nprocs']} but {len(peers)} procs are listed")
    if expected_nprocs is not None and len(peers) != expected_nprocs:
        raise SingaConfigError(f"{source} lists {len(peers)} processes but the job has {expected_nprocs} "
                               "(by its cluster section)")
    return ClusterFile(str(raw.get("job", "")), tuple(sorted(peers, key=lambda p: p.id)))


def load_cluster(path: str | Path, expected_nprocs: int | None) -> ClusterFile:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SingaConfigError(f"cannot read cluster file {path}: {exc}") from None
    return parse_cluster(text, expected_nprocs, str(path))
