#!/usr/bin/env python3
"""Start and stop real Apache Mesos masters and agents here (prototype of issue 13, phase 1).

    tools/apache_mesos.py local   --dir D [--resources "cpus:4;mem:8192"]
    tools/apache_mesos.py cluster --dir D --prefix P [--masters 3]   # after `cluster up --no-agents --zk --prefix P`
    tools/apache_mesos.py status  --dir D
    tools/apache_mesos.py failover --dir D                           # kill the leader, time the election
    tools/apache_mesos.py restart-master --dir D --index I
    tools/apache_mesos.py down    --dir D

`local` and `cluster` start the daemons in the background, write D/mesos.json
(pids, addresses, command lines) and print what `scylla-singa run --master`
takes; `down` stops exactly those processes and removes the namespaces they
made. The Mesos install: --mesos-home, $MESOS_HOME, or tools/ensure_mesos.sh.
Needs root (namespaces, the Docker socket).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scylla_singa.cluster import apache_mesos as am  # noqa: E402
from scylla_singa.cluster.state import load as load_cluster, state_path  # noqa: E402


def state_file(directory: str) -> str:
    return str(Path(directory) / "mesos.json")


def cmd_local(args: argparse.Namespace) -> int:
    if Path(state_file(args.dir)).exists():
        print(f"error: {state_file(args.dir)} exists: run `down --dir {args.dir}` first", file=sys.stderr)
        return 1
    cluster = am.up_local(am.find_install(args.mesos_home), args.dir, args.resources)
    am.save(cluster, state_file(args.dir))
    print(cluster.master)
    return 0


def cmd_cluster(args: argparse.Namespace) -> int:
    if Path(state_file(args.dir)).exists():
        print(f"error: {state_file(args.dir)} exists: run `down --dir {args.dir}` first", file=sys.stderr)
        return 1
    state = load_cluster(state_path(prefix=args.prefix))
    if state is None or state.status != "up":
        print(f"error: no cluster {args.prefix!r} is up: `scylla-singa cluster up --no-agents --zk "
              f"--prefix {args.prefix}` first", file=sys.stderr)
        return 1
    if state.config.agents:
        print(f"error: cluster {args.prefix!r} runs our own masters and agents; bring it up with --no-agents",
              file=sys.stderr)
        return 1
    cluster = am.up_in_cluster(am.find_install(args.mesos_home), state.config, args.masters, args.dir,
                               args.resources)
    am.save(cluster, state_file(args.dir))
    print(cluster.master)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    cluster = am.load(state_file(args.dir))
    leader = am.leader_of(cluster.addresses())
    print(json.dumps({"master": cluster.master, "leader": leader,
                      "masters": {m["address"]: am.launcher.running(m["pid"], m["start"]) for m in cluster.masters},
                      "agents_registered": len(am.registered_agents(leader)) if leader else 0,
                      "agents": len(cluster.agents)}, indent=1))
    return 0


def cmd_failover(args: argparse.Namespace) -> int:
    cluster = am.load(state_file(args.dir))
    print(json.dumps(am.measure_failover(cluster)))
    return 0


def cmd_restart_master(args: argparse.Namespace) -> int:
    cluster = am.load(state_file(args.dir))
    am.restart_master(cluster, args.index)
    am.save(cluster, state_file(args.dir))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    path = Path(state_file(args.dir))
    if not path.exists():
        print(f"nothing to stop: no {path}")
        return 0
    am.load(str(path)).stop()
    path.unlink()
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("local", "cluster", "status", "failover", "restart-master", "down"):
        s = sub.add_parser(name)
        s.add_argument("--dir", required=True, help="where work dirs, logs and mesos.json go")
        if name in ("local", "cluster"):
            s.add_argument("--mesos-home", help="a Mesos install (default: $MESOS_HOME or tools/ensure_mesos.sh)")
            s.add_argument("--resources", default=None if name == "cluster" else "cpus:4;mem:8192",
                           help="what each agent offers (cluster: the cluster's own per-node resources)")
        if name == "cluster":
            s.add_argument("--prefix", required=True, help="the cluster-in-a-box's --prefix")
            s.add_argument("--masters", type=int, default=1, help="real masters (ZooKeeper elects the leader)")
        if name == "restart-master":
            s.add_argument("--index", type=int, required=True, help="0-based master index in mesos.json")
    args = p.parse_args()
    handler = {"local": cmd_local, "cluster": cmd_cluster, "status": cmd_status, "failover": cmd_failover,
               "restart-master": cmd_restart_master, "down": cmd_down}[args.command]
    try:
        return handler(args)
    except (am.MesosError, TimeoutError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
