"""ZeroMQ between processes: one ROUTER bound per process, one DEALER to each peer.

SINGA v0's layout: a process receives everything on its ROUTER (bound on
0.0.0.0:<its port>) and sends to peer k through a DEALER connected to k's
ROUTER by the host name in cluster.json. ZeroMQ connects in the
background and retries, so peers may start in any order; messages to a
peer not yet up wait in the DEALER's queue. A connect attempt gives up
after a second (CONNECT_TIMEOUT) and is retried: without it, a connect to
the overlay address of a peer container that is gone waits for the
kernel's SYN retries (minutes) before the next try. Sends never block: a full queue
(a peer gone for long) drops the message, and the heartbeat timeout reports
the peer.
"""

from __future__ import annotations

import zmq

from .cluster_file import Peer
from .messages import Msg, decode, encode
from .runtime_errors import SingaConfigError


CONNECT_TIMEOUT_MS = 1000


class ZmqTransport:
    def __init__(self, me: int, peers: tuple[Peer, ...], bind_host: str = "0.0.0.0") -> None:
        self.me = me
        self.malformed = 0
        self.ctx = zmq.Context()
        self.router = self.ctx.socket(zmq.ROUTER)
        self.router.setsockopt(zmq.LINGER, 0)
        self.router.setsockopt(zmq.RCVHWM, 0)
        port = peers[me].port
        try:
            self.router.bind(f"tcp://{bind_host}:{port}")
        except zmq.ZMQError as exc:
            self.close()
            raise SingaConfigError(f"process {me} cannot listen on port {port}: {exc}") from None
        self.dealers: dict[int, zmq.Socket] = {}
        for peer in peers:
            if peer.id == me:
                continue
            d = self.ctx.socket(zmq.DEALER)
            d.setsockopt(zmq.IDENTITY, f"p{me}".encode())
            d.setsockopt(zmq.LINGER, 2000)
            d.setsockopt(zmq.SNDHWM, 100000)
            d.setsockopt(zmq.RECONNECT_IVL, 100)
            d.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
            d.setsockopt(zmq.CONNECT_TIMEOUT, CONNECT_TIMEOUT_MS)
            d.connect(f"tcp://{peer.host}:{peer.port}")
            self.dealers[peer.id] = d
        self.poller = zmq.Poller()
        self.poller.register(self.router, zmq.POLLIN)

    def send(self, proc: int, msg: Msg) -> bool:
        """Queue `msg` for process `proc`; False when it had to be dropped."""
        try:
            self.dealers[proc].send_multipart(encode(msg), flags=zmq.NOBLOCK, copy=False)
            return True
        except zmq.Again:
            return False

    def receive(self, timeout_ms: int) -> list[Msg]:
        """Messages that arrive within `timeout_ms` (all that are ready, at most 256)."""
        out: list[Msg] = []
        if not self.poller.poll(timeout_ms):
            return out
        while len(out) < 256:
            try:
                frames = self.router.recv_multipart(flags=zmq.NOBLOCK)
            except zmq.Again:
                break
            try:
                out.append(decode(frames[1:]))
            except (ValueError, KeyError, TypeError):
                self.malformed += 1  # not one of ours (a port scan, a stray client): ignored
        return out

    def close(self, linger_ms: int | None = None) -> None:
        for d in getattr(self, "dealers", {}).values():
            if linger_ms is not None:
                d.setsockopt(zmq.LINGER, linger_ms)
            d.close()
        self.router.close()
        self.ctx.term()
