"""The client scenarios of tools/mesos_clients/try_clients.py (one definition of how each client is driven
and what its own sign of success is), loaded for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / ".cache" / "clients"
TRY_CLIENTS = REPO / "tools" / "mesos_clients" / "try_clients.py"


def try_clients() -> ModuleType:
    """tools/ is not a package: load the driver by its path, once."""
    name = "scylla_try_clients"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, TRY_CLIENTS)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def installed() -> bool:
    bins = [CLIENTS / "bin" / n for n in ("example-scheduler", "example-executor", "msh", "mwatch")]
    return all(p.exists() for p in bins) and (CLIENTS / "venv" / "bin" / "mesos-cli").exists() and \
        (CLIENTS / "node" / "node_modules" / "@dcos" / "mesos-client").is_dir()
