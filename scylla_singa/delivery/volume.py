"""Volume delivery: a per-job directory on the agents' hosts, bind-mounted into each task.

Only directories under the allowed roots are ever mounted (our agent
enforces the same rule on its side, and more: a job directory is mounted
only by tasks of the framework that first mounted it, see
mesos/agent/job_volumes.py). The job files are mounted read-only at
absolute paths outside the sandbox (contracts.JOB_FILES_DIR: a Mesos
sandbox is 0750 root, which the image's non-root user cannot read), the
workspace read-write and writable by that user. Every agent must see the
directory at the same path: one machine, or a shared filesystem.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from scylla_singa.common.files import write_atomic
from scylla_singa.contracts import JOB_FILES_DIR, VOLUME_OWNER_FILE
from .job_files import Artifacts, DeliveryError

WORKSPACE = "/workspace"


def within(path: Path, roots: tuple[Path, ...]) -> bool:
    resolved = path.resolve()
    return any(resolved == r.resolve() or r.resolve() in resolved.parents for r in roots)


@dataclass(frozen=True)
class VolumeDelivery:
    root: Path
    allowed_roots: tuple[Path, ...]

    def __post_init__(self) -> None:
        if not within(self.root, self.allowed_roots):
            raise DeliveryError(f"volume root {self.root} is outside the allowed roots "
                                f"({', '.join(map(str, self.allowed_roots))}); choose a root under one of them")

    def job_dir(self, job_id: str) -> Path:
        return self.root / job_id

    def prepare(self, job_id: str, files: dict[str, bytes], network: str) -> Artifacts:
        d = self.job_dir(job_id)
        (d / "workspace").mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o755)
        # The runtime runs as a non-root user that must write checkpoints here.
        os.chmod(d / "workspace", 0o1777)
        volumes = []
        for name, data in files.items():
            write_atomic(d / name, data, mode=0o644)
            volumes.append({"container_path": f"{JOB_FILES_DIR}/{name}", "host_path": str(d / name), "mode": "RO"})
        volumes.append({"container_path": WORKSPACE, "host_path": str(d / "workspace"), "mode": "RW"})
        return Artifacts(network=network, volumes=tuple(volumes), workspace=WORKSPACE)

    def cleanup(self, job_id: str, keep_workspace: bool) -> None:
        d = self.job_dir(job_id)
        if not d.exists():
            return
        if keep_workspace:
            for child in d.iterdir():
                if child.name != "workspace":
                    child.unlink(missing_ok=True) if child.is_file() else shutil.rmtree(child, ignore_errors=True)
        else:
            shutil.rmtree(d, ignore_errors=True)


def shared_workspace_path(conf_workspace: str) -> str:
    """Where a job works inside a shared workspace mounted at /workspace: its conf's own
    `cluster.workspace` when that lies inside /workspace (SINGA's examples: /workspace/rbm1), else
    /workspace itself."""
    path = posixpath.normpath(conf_workspace) if conf_workspace else ""
    return path if path.startswith(WORKSPACE + "/") else WORKSPACE


def share_workspace(artifacts: Artifacts, host_dir: Path, workspace: str) -> Artifacts:
    """`artifacts` with the job's workspace mount replaced by `host_dir` (`run --workspace`), where
    the job works in `workspace`. Jobs given one directory share it, so one job's `checkpoint_path`
    can name another's checkpoints (SINGA's RBM pretraining chain does)."""
    volumes = tuple({**v, "host_path": str(host_dir)} if v.get("container_path") == WORKSPACE else v
                    for v in artifacts.volumes)
    return replace(artifacts, volumes=volumes, workspace=workspace)


def ensure_shared_workspace(path: Path, roots: tuple[Path, ...]) -> Path:
    """Check (and create, writable by the image's uid 1000) a `run --workspace` directory; DeliveryError
    says what is wrong. An existing directory is left as it is, but for its owner mark: agents let only the
    framework whose task first mounts a job directory mount it again (VOLUME_OWNER_FILE); the user giving
    it to this run hands it to this run's framework."""
    if not within(path, roots):
        raise DeliveryError(f"--workspace {path} is outside the allowed roots ({', '.join(map(str, roots))}): "
                            "agents mount only directories under them; choose one there")
    if path.exists() and not path.is_dir():
        raise DeliveryError(f"--workspace {path} exists and is not a directory")
    if not path.exists():
        path.mkdir(parents=True)
        os.chmod(path, 0o1777)
    _job_dir(path.resolve(), roots).joinpath(VOLUME_OWNER_FILE).unlink(missing_ok=True)
    return path.resolve()


def _job_dir(path: Path, roots: tuple[Path, ...]) -> Path:
    """The job directory `path` lies in, as agents see it: the first directory below its allowed root."""
    for root in roots:
        root = root.resolve()
        if root in path.parents:
            return root / path.relative_to(root).parts[0]
    return path
