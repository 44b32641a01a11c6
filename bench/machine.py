"""What machine a benchmark ran on: cores, memory, kernel, Python, Docker, commit."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "-"


def memory_gb() -> float | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024 / 1024
    return None


def os_name() -> str:
    for line in _read("/etc/os-release").splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return platform.system()


def docker_versions() -> tuple[str, str]:
    try:
        import docker
        client = docker.from_env(timeout=10)
        engine = client.version().get("Version", "?")
        client.close()
        return engine, docker.__version__
    except Exception as exc:  # noqa: BLE001 - no engine is a fact to report, not an error
        return f"unavailable ({exc.__class__.__name__})", "-"


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{head}{' (with uncommitted changes)' if dirty else ''}" if head else "-"
    except (OSError, subprocess.SubprocessError):
        return "-"


def describe() -> dict[str, Any]:
    """The machine as the report shows it."""
    import numpy
    try:
        import zmq
        zmq_versions = f"{zmq.__version__} / {zmq.zmq_version()}"
    except ImportError:
        zmq_versions = "-"
    engine, sdk = docker_versions()
    mem = memory_gb()
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory": f"{mem:.1f} GiB" if mem else "-",
        "kernel": platform.release(),
        "os": os_name(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pyzmq": zmq_versions,
        "docker_engine": engine,
        "docker_sdk": sdk,
        "commit": git_commit(),
        "load": "%.1f / %.1f / %.1f" % os.getloadavg(),
    }
