"""Builds the project's Docker images on a machine with no registry.

Every directory under images/ with a `build.yaml` is an image:

    tag: singa:latest            # what to build
    order: 20                    # build order (base first)
    context: ../..               # build context, relative to the image dir (default ".")
    dockerfile: Dockerfile       # relative to the image dir
    inputs: [scylla_singa/jobconf, images/singa]   # repo paths whose content keys the cache
    prepare: module:function     # optional; called with the repo root before building (scylla_singa.images.*)
    script: build.sh             # instead of a Dockerfile: a script that produces the tag
    only_if_absent: true         # build only when the tag is missing (the base image)

An image is rebuilt only when the hash of its inputs (plus the base image's
id) differs from the `io.scylla.inputs` label of the existing image, so a
second `make images` takes seconds.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
IMAGES_DIR = REPO_ROOT / "images"
INPUTS_LABEL = "io.scylla.inputs"
BASE_TAG = "debian:bookworm-slim"


class ImageBuildError(RuntimeError):
    """An image cannot be built; the message says which and why (the build log went to stderr)."""


@dataclass(frozen=True)
class ImageSpec:
    """One buildable image, as read from images/<name>/build.yaml."""

    name: str
    directory: Path
    tag: str
    order: int = 50
    context: str = "."
    dockerfile: str = "Dockerfile"
    inputs: tuple[str, ...] = ()
    prepare: str | None = None
    script: str | None = None
    only_if_absent: bool = False
    build_args: dict[str, str] = field(default_factory=dict)


def discover(images_dir: Path = IMAGES_DIR) -> list[ImageSpec]:
    """All image specs under `images_dir`, in build order."""
    specs = []
    for spec_file in sorted(images_dir.glob("*/build.yaml")):
        raw = yaml.safe_load(spec_file.read_text()) or {}
        specs.append(ImageSpec(
            name=spec_file.parent.name, directory=spec_file.parent, tag=raw["tag"],
            order=int(raw.get("order", 50)), context=raw.get("context", "."),
            dockerfile=raw.get("dockerfile", "Dockerfile"), inputs=tuple(raw.get("inputs", ())),
            prepare=raw.get("prepare"), script=raw.get("script"),
            only_if_absent=bool(raw.get("only_if_absent", False)),
            build_args={str(k): str(v) for k, v in (raw.get("build_args") or {}).items()}))
    return sorted(specs, key=lambda s: (s.order, s.name))


def inputs_hash(spec: ImageSpec, base_id: str) -> str:
    """Content hash of the image's own directory, its declared inputs and the base image id."""
    h = hashlib.sha256(base_id.encode())
    generated = _generated_names(spec.directory)
    paths = [spec.directory] + [REPO_ROOT / p for p in spec.inputs]
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            if "__pycache__" in f.parts or f.suffix == ".pyc" or generated & set(f.relative_to(root).parts):
                continue
            h.update(str(f.relative_to(REPO_ROOT)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:20]


def _generated_names(directory: Path) -> set[str]:
    """Names the image directory's .gitignore lists: files `prepare` writes, not inputs."""
    ignore = directory / ".gitignore"
    if not ignore.exists():
        return set()
    return {line.strip().strip("/") for line in ignore.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def image_of(client: docker.DockerClient, tag: str):
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def build_image(client: docker.DockerClient, spec: ImageSpec, force: bool = False) -> str:
    """Build `spec` unless an up-to-date image exists. Returns 'built' or 'cached'."""
    existing = image_of(client, spec.tag)
    if spec.only_if_absent and existing is not None and not force:
        return "cached"
    base = image_of(client, BASE_TAG)
    key = inputs_hash(spec, base.id if base is not None and spec.tag != BASE_TAG else "")
    if existing is not None and not force and existing.labels.get(INPUTS_LABEL) == key:
        return "cached"
    if spec.prepare:
        module, _, func = spec.prepare.partition(":")
        getattr(importlib.import_module(module), func)(REPO_ROOT)
    if spec.script:
        subprocess.run([str(spec.directory / spec.script), spec.tag], check=True, cwd=spec.directory)
        return "built"
    context = (spec.directory / spec.context).resolve()
    dockerfile = os.path.relpath(spec.directory / spec.dockerfile, context)
    _docker_build(client, context, dockerfile, spec.tag, {INPUTS_LABEL: key}, spec.build_args)
    return "built"


def _docker_build(client: docker.DockerClient, context: Path, dockerfile: str, tag: str,
                  labels: dict[str, str], build_args: dict[str, str]) -> None:
    """Run a build, streaming nothing on success and the whole log on failure."""
    log: list[str] = []
    for chunk in client.api.build(path=str(context), dockerfile=dockerfile, tag=tag, labels=labels,
                                  buildargs=build_args, rm=True, forcerm=True, decode=True, pull=False):
        if "stream" in chunk:
            log.append(chunk["stream"])
        if "error" in chunk:
            sys.stderr.write("".join(log[-60:]))
            raise ImageBuildError(f"building {tag} failed: {chunk['error'].strip()}")


def build_all(only: tuple[str, ...] = (), force: bool = False, echo: Callable[[str], None] = print) -> None:
    """Build every image (or those named in `only`) in order."""
    client = docker.from_env(timeout=600)
    specs = discover()
    unknown = set(only) - {s.name for s in specs} - {s.tag for s in specs}
    if unknown:
        raise ImageBuildError(f"unknown image(s): {', '.join(sorted(unknown))}; "
                                   f"known: {', '.join(s.name for s in specs)}")
    for spec in specs:
        if only and spec.name not in only and spec.tag not in only:
            continue
        started = time.monotonic()
        result = build_image(client, spec, force=force)
        echo(f"  {spec.tag:<28} {result} ({time.monotonic() - started:.1f}s)")
