"""`scylla-singa swarm`: swarm membership and the overlay smoke check."""

from __future__ import annotations

import sys
import uuid

import click
import docker
import docker.errors

from scylla_singa.contracts import JOB_LABEL
from scylla_singa.swarm.overlay_check import OverlayCheckError, run_overlay_check
from scylla_singa.swarm.overlays import SwarmError, ensure_swarm, job_networks, remove_job_network


@click.group()
def swarm() -> None:
    """Docker Swarm membership and per-job overlay networks."""


@swarm.command()
@click.option("--image", default="scylla-tiny:latest", show_default=True, help="Image with busybox sh and nc.")
@click.option("--encrypted", is_flag=True, help="Check an encrypted (IPsec) overlay.")
def check(image: str, encrypted: bool) -> None:
    """Prove the overlay works here: make the engine a swarm manager if
    needed, create an attachable overlay, start two containers on it, have
    one reach the other by name over TCP, then remove everything."""
    client = docker.from_env()
    try:
        state = ensure_swarm(client)
        click.echo(f"swarm: node {state.node_id[:12]} manager, advertising {state.node_addr}")
        result = run_overlay_check(client, image, f"check-{uuid.uuid4().hex[:8]}", encrypted)
    except (SwarmError, OverlayCheckError) as exc:
        click.echo(f"overlay check failed: {exc}", err=True)
        sys.exit(1)
    click.echo(f"overlay ok: {result.client_name} reached {result.server_name} "
               f"({result.server_ip}) by name on {result.network} in {result.seconds:.1f}s; cleaned up")


@swarm.command("gc")
@click.option("--down-nodes", is_flag=True,
              help="Also forget the swarm's worker nodes that are down: machines that left a `cluster init` "
                   "cluster, or hosts of a cluster whose owner was killed. A machine that is only rebooting "
                   "would then have to join again.")
def gc(down_nodes: bool) -> None:
    """Remove job overlays left behind by jobs that are gone (no containers attached)."""
    client = docker.from_env()
    for net in job_networks(client):
        net.reload()
        if not net.attrs.get("Containers"):
            job = net.attrs.get("Labels", {}).get(JOB_LABEL, net.name)
            remove_job_network(client, job, timeout_s=5)
            click.echo(f"removed {net.name}")
    if down_nodes:
        try:
            nodes = client.nodes.list()
        except docker.errors.APIError:
            click.echo("error: --down-nodes needs a swarm manager (this engine is not one)", err=True)
            sys.exit(1)
        for node in nodes:
            attrs = node.attrs
            if attrs.get("Status", {}).get("State") == "down" and attrs.get("Spec", {}).get("Role") == "worker":
                node.remove(force=True)
                click.echo(f"forgot swarm node {attrs.get('Description', {}).get('Hostname', node.id)} "
                           f"({attrs.get('Status', {}).get('Addr', '?')})")
