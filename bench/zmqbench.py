"""ZeroMQ round-trip latency and throughput between two processes (run inside singa-py:latest containers).

    python3 zmqbench.py server PORT
    python3 zmqbench.py client HOST PORT PLAN_JSON     -> prints `RESULT {json}`

Only the standard library and pyzmq: the benchmark passes this file's text
to `python3 -c` in the containers. The server binds a REP socket on PORT
(control and ping-pong) and a PULL socket on PORT+1 (bulk). The client:
- latency: `warmup` + `rtts` round trips of a 64-byte message on REQ/REP,
  each timed on its own (microseconds);
- throughput: for each (size, count), tells the server what comes, PUSHes
  `count` messages of `size` bytes, then asks on REQ/REP for "done", which
  the server answers once it has pulled them all; repeated `repeats` times.
"""

import json
import sys
import time

import zmq


def server(port):
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.bind("tcp://*:%d" % port)
    pull = ctx.socket(zmq.PULL)
    pull.setsockopt(zmq.RCVHWM, 0)
    pull.bind("tcp://*:%d" % (port + 1))
    while True:
        msg = rep.recv()
        if msg.startswith(b"start "):
            count = int(msg.split()[1])
            rep.send(b"ok")
            for _ in range(count):
                pull.recv()
            if rep.recv() != b"sync":
                raise SystemExit("protocol error: expected sync")
            rep.send(b"done")
        elif msg == b"bye":
            rep.send(b"bye")
            return
        else:
            rep.send(msg)  # ping-pong


def client(host, port, plan):
    ctx = zmq.Context()
    req = ctx.socket(zmq.REQ)
    req.connect("tcp://%s:%d" % (host, port))
    push = ctx.socket(zmq.PUSH)
    push.setsockopt(zmq.SNDHWM, 0)
    push.connect("tcp://%s:%d" % (host, port + 1))
    ping = b"x" * 64
    deadline = time.time() + plan.get("connect_timeout", 60)
    while True:  # the server may not be up yet: REQ queues, so wait for the first answer with a poll
        req.send(ping)
        if req.poll(1000):
            req.recv()
            break
        req.close(linger=0)
        if time.time() > deadline:
            raise SystemExit("server never answered")
        req = ctx.socket(zmq.REQ)
        req.connect("tcp://%s:%d" % (host, port))
    for _ in range(plan["warmup"]):
        req.send(ping)
        req.recv()
    rtts = []
    for _ in range(plan["rtts"]):
        t0 = time.perf_counter()
        req.send(ping)
        req.recv()
        rtts.append((time.perf_counter() - t0) * 1e6)
    throughput = []
    for size, count in plan["bulk"]:
        payload = b"y" * size
        for _ in range(plan["repeats"]):
            req.send(b"start %d" % count)
            req.recv()
            t0 = time.perf_counter()
            for _ in range(count):
                push.send(payload)
            req.send(b"sync")
            req.recv()
            dt = time.perf_counter() - t0
            throughput.append({"size": size, "count": count, "seconds": dt, "msgs_per_s": count / dt,
                               "mb_per_s": count * size / dt / 1e6})
    req.send(b"bye")
    req.recv()
    print("RESULT " + json.dumps({"rtt_us": rtts, "throughput": throughput}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(int(sys.argv[2]))
    else:
        client(sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]))
