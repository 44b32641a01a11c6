"""The client scenarios of tools/mesos_clients/try_clients.py (one definition of how each client is driven
and what its own sign of success is), loaded for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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


def run_scenario(cluster: Any, name: str) -> tuple[bool, str]:
    """Run the client scenario `name` against an EmbeddedMesos (its master and first agent): whether the
    client showed its own sign of success, and its output (the client's, then any background watcher's)."""
    driver = try_clients()
    scenarios = {s.name: s for s in driver.scenarios(cluster.master_address, cluster.agent_addresses[0])}
    outcome = driver.run(scenarios[name], cluster.master_address)
    return outcome.result == "works", "\n".join(outcome.evidence + outcome.background_evidence)
