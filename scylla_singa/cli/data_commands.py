"""`scylla-singa data`: data sets prepared as SINGA input files (scylla_singa.datasets)."""

from __future__ import annotations

from pathlib import Path

import click

from scylla_singa.datasets.digits import write_digits


@click.group()
def data() -> None:
    """Prepare data sets for SINGA jobs."""


@data.command("digits")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write train/test CSV and record-store files into.")
def digits_cmd(out: Path) -> None:
    """scikit-learn's handwritten digits (1,797 8x8 images, 10 classes), split 1,437/360."""
    meta = write_digits(out)
    click.echo(f"digits: {meta['counts']['train']} train, {meta['counts']['test']} test records in {out} "
               "(train.csv, test.csv, train.bin, test.bin)")
