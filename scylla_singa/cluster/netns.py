"""The cluster LAN: a host bridge, network namespaces, veth links and iptables rules.

Every create is idempotent (an existing, matching object is kept) and every
destroy tolerates the object being gone already.
"""

from __future__ import annotations

import json
import os
import shlex
import signal

from .sh import CommandError, ok, run

NETNS_DIR = "/var/run/netns"


# -- links --------------------------------------------------------------------
def link_exists(name: str, netns: str | None = None) -> bool:
    return ok(["ip", *(["-n", netns] if netns else []), "link", "show", "dev", name])


def links_with_prefix(prefix: str) -> list[str]:
    """Host interfaces named `<prefix>-...` (bridges, veths, the services bridge)."""
    out = json.loads(run(["ip", "-j", "link", "show"]) or "[]")
    return sorted(i["ifname"] for i in out if i.get("ifname", "").startswith(f"{prefix}-"))


def create_bridge(name: str, address: str) -> None:
    """Bridge `name` with host address `address` (CIDR), up."""
    if not link_exists(name):
        run(["ip", "link", "add", name, "type", "bridge"])
    if address.split("/")[0] not in run(["ip", "-4", "-o", "addr", "show", "dev", name]):
        run(["ip", "addr", "add", address, "dev", name])
    run(["ip", "link", "set", name, "up"])


def delete_link(name: str) -> None:
    """Delete a host interface (a veth takes its peer with it); no-op when absent."""
    if link_exists(name):
        run(["ip", "link", "del", name], check=False)


# -- namespaces ---------------------------------------------------------------
def netns_path(name: str) -> str:
    return os.path.join(NETNS_DIR, name)


def netns_list(prefix: str) -> list[str]:
    out = run(["ip", "-j", "netns", "list"], check=False).strip()
    names = [n["name"] for n in json.loads(out)] if out else []
    return sorted(n for n in names if n.startswith(f"{prefix}-"))


def create_netns(name: str) -> None:
    if not os.path.exists(netns_path(name)):
        run(["ip", "netns", "add", name])
    run(["ip", "-n", name, "link", "set", "lo", "up"])


def netns_pids(name: str) -> list[int]:
    if not os.path.exists(netns_path(name)):
        return []
    return [int(p) for p in run(["ip", "netns", "pids", name], check=False).split()]


def delete_netns(name: str) -> None:
    """Kill whatever still runs in the namespace (all of it is ours), then delete it."""
    for pid in netns_pids(name):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if os.path.exists(netns_path(name)):
        run(["ip", "netns", "del", name], check=False)
    if os.path.exists(netns_path(name)):  # a stale mount point left by a crash
        run(["umount", "-l", netns_path(name)], check=False)
        try:
            os.unlink(netns_path(name))
        except OSError:
            pass


def create_veth(host_if: str, netns: str, bridge: str, address: str, gateway: str) -> None:
    """veth `host_if` on `bridge`, its peer `eth0` in `netns` with `address` and a default route."""
    if not link_exists("eth0", netns):
        delete_link(host_if)
        run(["ip", "link", "add", host_if, "type", "veth", "peer", "name", "eth0", "netns", netns])
    run(["ip", "link", "set", host_if, "master", bridge, "up"])
    if address.split("/")[0] not in run(["ip", "-n", netns, "-4", "-o", "addr", "show", "dev", "eth0"]):
        run(["ip", "-n", netns, "addr", "add", address, "dev", "eth0"])
    run(["ip", "-n", netns, "link", "set", "eth0", "up"])
    run(["ip", "-n", netns, "route", "replace", "default", "via", gateway])


# -- iptables -----------------------------------------------------------------
def _rule(table: str, op: str, chain: str, rule: list[str], comment: str) -> list[str]:
    return ["iptables", "-w", "5", "-t", table, op, chain, *rule, "-m", "comment", "--comment", comment]


def add_rule(table: str, chain: str, rule: list[str], comment: str) -> None:
    """Insert the rule at the top of `chain` unless it is there already."""
    if ok(_rule(table, "-C", chain, rule, comment)):
        return
    if chain == "DOCKER-USER" and not ok(["iptables", "-w", "5", "-t", table, "-S", chain]):
        raise CommandError("iptables chain DOCKER-USER is missing: is the host's dockerd running with "
                           "iptables enabled?")
    run(["iptables", "-w", "5", "-t", table, "-I", chain, "1", *rule, "-m", "comment", "--comment", comment])


def delete_rule(table: str, chain: str, rule: list[str], comment: str) -> None:
    while ok(_rule(table, "-C", chain, rule, comment)):
        run(_rule(table, "-D", chain, rule, comment), check=False)


def rules_with_comment(comment: str) -> list[tuple[str, list[str]]]:
    """(table, `-A CHAIN ...` as argv) of every rule carrying `comment`, in filter and nat."""
    found = []
    for table in ("filter", "nat"):
        for line in run(["iptables", "-w", "5", "-t", table, "-S"], check=False).splitlines():
            args = shlex.split(line)
            if line.startswith("-A ") and comment in args:
                found.append((table, args))
    return found


def delete_rule_spec(table: str, spec: list[str]) -> None:
    """Delete a rule given as printed by `iptables -S` (`-A CHAIN ...`)."""
    run(["iptables", "-w", "5", "-t", table, "-D", *spec[1:]], check=False)
