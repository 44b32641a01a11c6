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
import subprocess
import sys
from importlib import metadata
from pathlib import Path


def protobuf_wheel_name() -> str:
    return f"protobuf-{metadata.version('protobuf')}-py3-none-any.whl"


def ensure_protobuf_wheel(wheels: Path) -> Path:
    """The pure-Python protobuf wheel of the version installed here (it must match job_pb2.py)."""
    wheels.mkdir(parents=True, exist_ok=True)
    target = wheels / protobuf_wheel_name()
    if target.exists():
        return target
    cached = Path(__file__).resolve().parents[2] / ".cache" / "wheelhouse" / target.name
    if cached.exists():
        target.write_bytes(cached.read_bytes())
        return target
    version = metadata.version("protobuf")
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-deps",
           "--only-binary", ":all:", "--platform", "any", "--python-version", "3.11",
           f"protobuf=={version}", "-d", str(wheels)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not target.exists():
        raise RuntimeError(f"could not download {target.name} for the singa-py image:\n{proc.stdout}{proc.stderr}")
    return target


def ensure_digits(out: Path) -> None:
    """The digits files, written by `scylla-singa data digits` unless complete ones are there."""
    meta = out / "meta.json"
    names = ("train.csv", "test.csv", "train.bin", "test.bin")
    if meta.exists() and all((out / n).exists() for n in names):
        try:
            if json.loads(meta.read_text()).get("counts") == {"train": 1437, "test": 360}:
                return
        except ValueError:
            pass
    from .data_cli import write_digits
    write_digits(out)


def prepare_singa_py(repo_root: Path) -> None:
    image_dir = repo_root / "images" / "singa-py"
    ensure_protobuf_wheel(image_dir / "wheels")
    ensure_digits(image_dir / "data")
