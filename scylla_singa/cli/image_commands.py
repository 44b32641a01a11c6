"""`scylla-singa images`: build and list the project's Docker images (scylla_singa.images)."""

from __future__ import annotations

import click
import docker

from scylla_singa.images.builder import (BASE_TAG, INPUTS_LABEL, ImageBuildError, build_all, discover, image_of,
                                         inputs_hash)


@click.group()
def images() -> None:
    """Build and list the project's Docker images (no registry needed)."""


@images.command("build")
@click.argument("names", nargs=-1)
@click.option("--force", is_flag=True, help="Rebuild even when the image is up to date.")
def build_cmd(names: tuple[str, ...], force: bool) -> None:
    """Build all images, or only NAMES (directory names under images/ or tags)."""
    click.echo("==> images")
    try:
        build_all(names, force, echo=click.echo)
    except ImageBuildError as exc:
        raise click.ClickException(str(exc)) from None


@images.command("list")
def list_cmd() -> None:
    """Show each image, its tag and whether it is built and current."""
    client = docker.from_env()
    base = image_of(client, BASE_TAG)
    for spec in discover():
        img = image_of(client, spec.tag)
        if img is None:
            state = "missing"
        elif spec.only_if_absent:
            state = "present"
        else:
            key = inputs_hash(spec, base.id if base is not None else "")
            state = "current" if img.labels.get(INPUTS_LABEL) == key else "stale"
        click.echo(f"{spec.name:<12} {spec.tag:<28} {state}")
