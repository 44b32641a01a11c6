"""`scylla-singa`: the command line.

Each command lives in the module of the part it belongs to; this file only
maps names to them and imports a command's module when it is invoked, so
`scylla-singa plan` does not pay for the Docker SDK or aiohttp.
"""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command or group.
COMMANDS: dict[str, str] = {
    "plan": "scylla_singa.jobconf.cli:plan",
    "swarm": "scylla_singa.swarm_cli:swarm",
    "images": "scylla_singa.images:images",
    "cluster": "scylla_singa.cluster.cli:cluster",
    "master": "scylla_singa.mesos.cli:master",
    "agent": "scylla_singa.mesos.cli:agent",
    "data": "scylla_singa.runtime.data_cli:data",
    "run": "scylla_singa.framework.cli:run",
    "resume": "scylla_singa.framework.cli:resume",
    "jobs": "scylla_singa.framework.cli:jobs",
    "status": "scylla_singa.framework.cli:status",
    "logs": "scylla_singa.framework.cli:logs",
    "kill": "scylla_singa.framework.cli:kill",
    "ui": "scylla_singa.ui.cli:ui",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attr = target.partition(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="scylla-singa")
def main() -> None:
    """Run SINGA training jobs on a Mesos cluster, every process in a Docker
    container on the job's own Docker Swarm overlay network.

    \b
    Start here:
      scylla-singa plan JOB.conf            show SINGA's process table and demand
      scylla-singa run --image singa:latest JOB.conf
    """
