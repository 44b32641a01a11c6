"""`scylla-singa`: the command line, the top layer (every click command lives in this package).

One module per command group (`*_commands.py`); this file only maps names
to them and imports a command's module when it is invoked, so `scylla-singa
plan` does not pay for the Docker SDK or aiohttp. The commands also compose
what the lower layers must not import themselves: the web UI's routes on
the master and the framework, the cluster and the embedded master for
`run` (see run_commands.py).
"""

from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command or group.
COMMANDS: dict[str, str] = {
    "plan": "scylla_singa.cli.plan_commands:plan",
    "swarm": "scylla_singa.cli.swarm_commands:swarm",
    "images": "scylla_singa.cli.image_commands:images",
    "cluster": "scylla_singa.cli.cluster_commands:cluster",
    "master": "scylla_singa.cli.mesos_commands:master",
    "agent": "scylla_singa.cli.mesos_commands:agent",
    "data": "scylla_singa.cli.data_commands:data",
    "run": "scylla_singa.cli.run_commands:run",
    "resume": "scylla_singa.cli.run_commands:resume",
    "jobs": "scylla_singa.cli.run_commands:jobs",
    "status": "scylla_singa.cli.run_commands:status",
    "logs": "scylla_singa.cli.run_commands:logs",
    "kill": "scylla_singa.cli.run_commands:kill",
    "ui": "scylla_singa.cli.ui_commands:ui",
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
