"""Copy the project's images from the host engine into a node engine (no registry).

`docker save` on the host, `docker load` into the node. An image is copied
only when the node lacks that image id under that tag; each image is saved
once per `up` into a cache directory and loaded from there into every node.
"""

from __future__ import annotations

from pathlib import Path

import docker
import docker.errors

from scylla_singa.common.files import write_atomic


def _image_id(c: docker.DockerClient, tag: str) -> str | None:
    try:
        return c.images.get(tag).id
    except docker.errors.ImageNotFound:
        return None


def _saved(host: docker.DockerClient, tag: str, image_id: str, cache: Path) -> Path:
    """A tarball of `tag` as `docker save` writes it, made once per image id."""
    path = cache / f"{image_id.split(':')[-1][:24]}.tar"
    if not path.exists():
        write_atomic(path, host.images.get(tag).save(named=True))
    return path


def sync(host: docker.DockerClient, node_engine: docker.DockerClient, node: str, images: list[str],
         cache: str) -> dict:
    """Load each of `images` the host has into `node`'s engine. Returns {loaded, present, absent}."""
    result: dict[str, list[str]] = {"loaded": [], "present": [], "absent": []}
    for tag in images:
        want = _image_id(host, tag)
        if want is None:
            result["absent"].append(tag)
        elif _image_id(node_engine, tag) == want:
            result["present"].append(tag)
        else:
            with open(_saved(host, tag, want, Path(cache)), "rb") as tar:
                for _ in node_engine.api.load_image(tar):
                    pass
            if _image_id(node_engine, tag) != want:
                raise RuntimeError(f"loading {tag} into {node} did not give image {want[:19]}")
            result["loaded"].append(tag)
    return result
