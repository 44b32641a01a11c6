"""`scylla-singa data digits|mnist-shaped|cifar-shaped --out DIR`: the click wiring over digits.py.

Host side only (digits.py imports scikit-learn, which the image lacks).
"""

from __future__ import annotations

from pathlib import Path

import click

from scylla_singa.datasets.digits import CIFAR_SHAPED, DIGITS, MNIST_SHAPED, DigitsSet, write_digits_set

_OUT = click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
                    help="Directory to write the files into (created if needed).")


@click.group()
def data() -> None:
    """Write SINGA input files (KVFile records and CSV) from scikit-learn's
    handwritten digits: 1,797 8x8 grey images of the digits 0-9, split
    1,437/360, no download. mnist-shaped and cifar-shaped are these digits
    scaled to MNIST's and CIFAR-10's shapes, not MNIST or CIFAR-10."""


def _write(variant: DigitsSet, out: Path) -> None:
    try:
        meta = write_digits_set(out, variant)
    except ImportError as exc:
        raise click.ClickException(f"{exc.name or 'scikit-learn'} is missing: install scylla-singa's data extra "
                                   "(pip install 'scylla-singa[data]'), which provides the digits") from None
    except OSError as exc:
        raise click.ClickException(f"cannot write the {variant.name} files into {out}: {exc.strerror or exc}") from None
    names = ", ".join(meta["files"].values())
    click.echo(f"{variant.name}: {meta['counts']['train']} train and {meta['counts']['test']} test records of "
               f"{'x'.join(map(str, meta['shape']))} in {out} ({names}, {variant.meta_file})")


@data.command("digits")
@_OUT
def digits_cmd(out: Path) -> None:
    """The digits as they are: 8x8 grey, values 0-16 (shape: 64, or 8 8).

    Writes train.bin and test.bin (SINGA KVFiles of RecordProto, backend
    "kvfile", layer kRecordInput), train.csv and test.csv (label,64 values;
    backend "textfile", layer kCSVInput) and meta.json."""
    _write(DIGITS, out)


@data.command("mnist-shaped")
@_OUT
def mnist_cmd(out: Path) -> None:
    """The digits in MNIST's shape, NOT MNIST: 28x28 grey, values 0-255.

    Each 8x8 digit is scaled to 20x20 and centred with a 4-pixel border, as
    MNIST frames its digits, so SINGA's mnist confs (shape: 784, or 1 28 28;
    mean_value/std_value 127.5 or std_value 255) read it once their paths
    point here. Writes digits-as-mnist-train.bin / -test.bin (KVFile, as
    SINGA's examples/mnist converter writes them), the same as .csv, and
    digits-as-mnist.json."""
    _write(MNIST_SHAPED, out)


@data.command("cifar-shaped")
@_OUT
def cifar_cmd(out: Path) -> None:
    """The digits in CIFAR-10's shape, NOT CIFAR-10: 3x32x32, values 0-255.

    Each 8x8 digit is scaled to 32x32, the same grey in all three channels
    (channels first, as CIFAR-10's files), so SINGA's cifar10 confs (shape:
    3 32 32, mean_file) read it once their paths point here. Writes
    digits-as-cifar-train.bin / -test.bin (KVFile, as SINGA's
    examples/cifar10 converter writes them), digits-as-cifar-mean.bin (the
    training set's per-pixel mean, one record keyed "mean"), the records as
    .csv too, and digits-as-cifar.json."""
    _write(CIFAR_SHAPED, out)
