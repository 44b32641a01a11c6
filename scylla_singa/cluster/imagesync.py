"""Copy the project's images from the host engine into a node engine (no registry).

`docker save` on the host, `docker load` into the node. An image is copied
only when the node lacks that image id under that tag; each image is saved
once per `up` into a cache directory and loaded from there into every node.
"""

from __future__ import annotations

import os
from pathlib import Path

import docker
import docker.errors

from . import engines


def _image_id(c: docker.DockerClient, tag: str) -> str | None:
    try:
        return c.images.get(tag).id
    except docker.errors.ImageNotFound:
        return None


def _saved(host: docker.DockerClient, tag: str, image_id: str, cache: Path) -> Path:
    """A tarball of `tag` as `docker save` writes it, made once per image id."""
    path = cache / f"{image_id.split(':')[-1][:24]}.tar"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as out:
            for chunk in host.images.get(tag).save(named=True):
                out.write(chunk)
        os.replace(tmp, path)
    return path


def sync(host: docker.DockerClient, node: str, socket: str, images: list[str], cache: str,
         **_: object) -> dict:
    """Load each of `images` the host has into the node engine. Returns {loaded, present, absent}."""
    c = engines.client(socket, timeout=600)
    result: dict[str, list[str]] = {"loaded": [], "present": [], "absent": []}
    try:
        for tag in images:
            want = _image_id(host, tag)
            if want is None:
                result["absent"].append(tag)
            elif _image_id(c, tag) == want:
                result["present"].append(tag)
            else:
                with open(_saved(host, tag, want, Path(cache)), "rb") as tar:
                    for _ in c.api.load_image(tar):
                        pass
                if _image_id(c, tag) != want:
                    raise RuntimeError(f"loading {tag} into {node} did not give image {want[:19]}")
                result["loaded"].append(tag)
    finally:
        c.close()
    return result
