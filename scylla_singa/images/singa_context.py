"""Build-context preparation for images/singa-py (run on the host by `scylla-singa images build`).

Containers cannot reach the package registries over HTTPS, so the one
Python package the image needs beyond Debian's (protobuf, pinned by the job
model's generated code) is downloaded here as its pure-Python wheel into
images/singa-py/wheels/, and the digits data set is converted here, with
`scylla-singa data digits`, into images/singa-py/data/. Both directories are
git-ignored and left out of the image's input hash. Idempotent: what is
already there is kept.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from .pure_wheels import ensure_pure_wheel


def protobuf_wheel_name() -> str:
    return f"protobuf-{metadata.version('protobuf')}-py3-none-any.whl"


def ensure_protobuf_wheel(wheels: Path) -> Path:
    """The pure-Python protobuf wheel of the version installed here (it must match job_pb2.py)."""
    return ensure_pure_wheel("protobuf", metadata.version("protobuf"), protobuf_wheel_name(), wheels, image="singa-py")


def ensure_digits(out: Path) -> None:
    """The digits files, written by `scylla-singa data digits` unless complete, current ones are there.

    Current means SINGA's KVFile format: .bin files written before the
    switch from the project's own record format are rewritten.
    """
    from scylla_singa.datasets.digits import RECORD_FORMAT, write_digits

    meta = out / "meta.json"
    names = ("train.csv", "test.csv", "train.bin", "test.bin")
    if meta.exists() and all((out / n).exists() for n in names):
        try:
            written = json.loads(meta.read_text())
            if written.get("counts") == {"train": 1437, "test": 360} and written.get("record_format") == RECORD_FORMAT:
                return
        except ValueError:
            pass
    write_digits(out)


def prepare_singa_py(repo_root: Path) -> None:
    image_dir = repo_root / "images" / "singa-py"
    ensure_protobuf_wheel(image_dir / "wheels")
    ensure_digits(image_dir / "data")
