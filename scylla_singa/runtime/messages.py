"""Messages between workers, servers and processes, and their wire encoding.

Addresses are strings: "w<g>.<j>" worker j of group g, "s<g>.<j>" server j
of group g, "p<k>" process k. On the wire a message is two ZeroMQ frames:
a JSON header {"kind", "src", "dst", "step", "proc", "meta"} and the payload,
a raw little-endian float32 vector (empty when there is none).

Kinds, by who sends them:

    worker -> server   PULL (values please), GRAD (meta n: samples; data: n * gradient slice),
                       DONE (no more steps), FINAL_PULL (values once every group is done)
    server -> worker   PARAM (meta lo, hi; data: the value slice; step: steps done)
    server -> server   SYNC (meta init | final; data: delta since last sync), SYNC_REPLY (data: values)
    process -> process HEARTBEAT (meta resume, ckpts), CKPT_WRITTEN (meta ok), CKPT_COMMIT,
                       PROC_DONE, EXIT, EXIT_ACK, ABORT (meta reason)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np


def worker_addr(group: int, index: int) -> str:
    return f"w{group}.{index}"


def server_addr(group: int, index: int) -> str:
    return f"s{group}.{index}"


def proc_addr(k: int) -> str:
    return f"p{k}"


def parse_addr(addr: str) -> tuple[str, int, int]:
    """("w"|"s", group, index) or ("p", k, 0)."""
    kind, rest = addr[0], addr[1:]
    if kind == "p":
        return "p", int(rest), 0
    g, _, j = rest.partition(".")
    return kind, int(g), int(j)


@dataclass
class Msg:
    """One message. `data` is a float32 vector or None; `proc` is the sending process (set by the sender)."""

    kind: str
    src: str
    dst: str
    step: int = 0
    data: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    proc: int = -1

    def __repr__(self) -> str:
        size = "" if self.data is None else f" [{self.data.size}]"
        return f"{self.kind}({self.src}->{self.dst} step={self.step}{size} {self.meta or ''})"


def encode(msg: Msg) -> list[bytes]:
    """The two frames of `msg`."""
    header = {"kind": msg.kind, "src": msg.src, "dst": msg.dst, "step": msg.step, "proc": msg.proc,
              "meta": msg.meta}
    payload = b"" if msg.data is None else np.ascontiguousarray(msg.data, dtype="<f4").tobytes()
    return [json.dumps(header, separators=(",", ":")).encode(), payload]


def decode(frames: list[bytes]) -> Msg:
    """A message from its two frames. Raises ValueError on a malformed one."""
    if len(frames) != 2:
        raise ValueError(f"expected 2 frames, got {len(frames)}")
    header = json.loads(frames[0])
    data = np.frombuffer(frames[1], dtype="<f4").astype(np.float32) if frames[1] else None
    return Msg(header["kind"], header["src"], header["dst"], int(header["step"]), data, header.get("meta") or {},
               int(header["proc"]))
