#!/usr/bin/env python3
"""A real Apache Mesos master and agent on this machine's Docker engine, for `scylla-singa run --master`.

    tools/apache_mesos.py local  --dir D [--resources "cpus:4;mem:8192"] [--mesos-home DIR]
    tools/apache_mesos.py status --dir D
    tools/apache_mesos.py down   --dir D

`local` starts mesos-master and mesos-agent on 127.0.0.1 (free ports) in
the background, writes D/mesos.json (pids, addresses, command lines) and
prints the master's address; `down` stops exactly those processes (the agent
with SIGUSR1, so its task containers go too). A multi-host Apache Mesos
cluster with ZooKeeper is `scylla-singa cluster up --mesos apache`. The Mesos
install: --mesos-home, $MESOS_HOME, or tools/ensure_mesos.sh. Needs root
(the Docker socket).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scylla_singa.cluster import apache_mesos as am  # noqa: E402
from scylla_singa.common.files import write_json_atomic  # noqa: E402


def state_file(directory: str) -> Path:
    return Path(directory) / "mesos.json"


def load(directory: str) -> am.LocalMesos:
    d = json.loads(state_file(directory).read_text())
    return am.LocalMesos(am.MesosDaemon.from_facts(d["master"]),
                         am.MesosDaemon.from_facts(d["agent"]) if d.get("agent") else None)


def cmd_local(args: argparse.Namespace) -> int:
    if state_file(args.dir).exists():
        print(f"error: {state_file(args.dir)} exists: run `down --dir {args.dir}` first", file=sys.stderr)
        return 1
    local = am.local_mesos(am.find_install(args.mesos_home), args.dir, args.resources)
    write_json_atomic(state_file(args.dir), {"master": local.master.facts(),
                                             "agent": local.agent.facts() if local.agent else None}, indent=1)
    print(local.master_address)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    local = load(args.dir)
    print(json.dumps({"master": local.master_address, "master_running": local.master.running(),
                      "leading": am.is_leader(local.master_address),
                      "agents_registered": len(am.registered_agents(local.master_address))}, indent=1))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    if not state_file(args.dir).exists():
        print(f"nothing to stop: no {state_file(args.dir)}")
        return 0
    load(args.dir).stop()
    state_file(args.dir).unlink()
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("local", "status", "down"):
        s = sub.add_parser(name)
        s.add_argument("--dir", required=True, help="where work dirs, logs and mesos.json go")
        if name == "local":
            s.add_argument("--mesos-home", help="a Mesos install (default: $MESOS_HOME or tools/ensure_mesos.sh)")
            s.add_argument("--resources", default="cpus:4;mem:8192", help="what the agent offers")
    args = p.parse_args()
    handler = {"local": cmd_local, "status": cmd_status, "down": cmd_down}[args.command]
    try:
        return handler(args)
    except (am.MesosError, TimeoutError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
